/**
 * Both sides of the handshake against each other over an in-memory stream, without sockets: with
 * and without authentication, refusals on either side, the timeout, and the frames that share a
 * chunk with the last handshake reply. ServerHandshake.test.ts and ClientHandshake.test.ts play
 * one side by hand.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { JSONRPCRequest } from 'json-rpc-2.0';
import { RpcErrorCode } from '../../backend/protocol/errors.js';
import { dialHandshake } from '../../backend/rpc/ClientHandshake.js';
import { AppKeyRing, type Credential, deriveKey } from '../../backend/rpc/credentials.js';
import { FramedStream } from '../../backend/rpc/FramedStream.js';
import type { HandshakeOptions } from '../../backend/rpc/Handshake.js';
import { successResponse } from '../../backend/rpc/responses.js';
import { acceptHandshake } from '../../backend/rpc/ServerHandshake.js';
import { Session, type SessionHost } from '../../backend/rpc/Session.js';
import { type Clock, ManualClock, systemClock } from '../../backend/util/clock.js';
import { duplexPair } from '../helpers/duplexPair.js';
import { waitFor } from '../helpers/processes.js';
import { testProtocol } from '../helpers/protocol.js';
import { captureLog, rpcError } from '../helpers/rpcAsserts.js';
import { secretAuth } from '../helpers/secretAuth.js';
import { within } from '../helpers/within.js';

const MAX = 1024 * 1024;

/** Answers every request with what it was sent, and notes notifications. */
function echoHost(notes: JSONRPCRequest[] = []): SessionHost {
  return {
    handleRequest(req) {
      if (req.id === undefined) {
        notes.push(req);
        return null;
      }
      return successResponse(req.id, { echo: req.params });
    },
  };
}

function options(address: string, secret?: string, clock: Clock = systemClock): HandshakeOptions {
  return { address, ...secretAuth(secret), clock, timeoutMs: 5_000 };
}

/** Runs both sides over one pair; each promise settles as its side's handshake does. */
function connect(server: HandshakeOptions, client: HandshakeOptions) {
  const [a, b] = duplexPair();
  const serverStream = new FramedStream(a, MAX, 'client-socket', testProtocol);
  const clientStream = new FramedStream(b, MAX, 'server-socket', testProtocol);
  const accepted = acceptHandshake(
    serverStream,
    server,
    (peer, principal) =>
      new Session(
        serverStream,
        { peer, principal, direction: 'inbound', clock: server.clock },
        echoHost(),
      ),
  );
  const dialled = dialHandshake(
    clientStream,
    client,
    (peer, principal) =>
      new Session(
        clientStream,
        { peer, principal, direction: 'outbound', clock: client.clock },
        echoHost(),
      ),
  );
  // A side that fails is asserted on by the test; the other must not be an unhandled rejection.
  accepted.catch(() => {});
  dialled.catch(() => {});
  return { accepted, dialled, serverStream, clientStream };
}

test('without authentication both sides open, each knowing the other, and can ask at once', async () => {
  const { accepted, dialled } = connect(options('server:1'), options('client-a'));
  const [server, client] = await Promise.all([accepted, dialled]);
  assert.equal(server.peer, 'client-a');
  assert.equal(client.peer, 'server:1');
  assert.deepEqual(await client.request('Q', { n: 1 }, 5_000, 'late'), { echo: { n: 1 } });
  assert.deepEqual(await server.request('Q', { n: 2 }, 5_000, 'late'), { echo: { n: 2 } });
});

test('with the same secret on both sides they open', async () => {
  const { accepted, dialled } = connect(
    options('server:1', 's3cret'),
    options('client-a', 's3cret'),
  );
  const [server, client] = await Promise.all([accepted, dialled]);
  assert.equal(server.peer, 'client-a');
  assert.deepEqual(await client.request('Q', {}, 5_000, 'late'), { echo: {} });
});

test('a wrong secret: the client refuses the server proof, and the server says the client hung up', async (t) => {
  const logged = captureLog(t);
  const { accepted, dialled } = connect(
    options('server:1', 'secret-Right-Qq1'),
    options('client-a', 'secret-Wrong-Zz2'),
  );
  await assert.rejects(
    dialled,
    rpcError(RpcErrorCode.AuthenticationFailed, /proof does not match/),
  );
  await assert.rejects(accepted);
  assert.ok(
    logged.some((l) =>
      /WARN.*Refused client-a \(client-socket\): it hung up during authentication/.test(l),
    ),
    logged.join('\n'),
  );
  assert.ok(!/secret-(Right|Wrong)/.test(logged.join('\n')), 'no secret is logged');
});

test('a client without authentication against an authenticating server is told to authenticate', async (t) => {
  const logged = captureLog(t);
  const { accepted, dialled, serverStream } = connect(
    options('server:1', 'sec'),
    options('client-a'),
  );
  await assert.rejects(
    dialled,
    rpcError(RpcErrorCode.AuthenticationFailed, /Authentication required/),
  );
  await assert.rejects(accepted, rpcError(RpcErrorCode.AuthenticationFailed));
  assert.ok(serverStream.isClosed);
  assert.ok(
    logged.some((l) => /WARN.*Refused client-a.*did not authenticate/.test(l)),
    logged.join('\n'),
  );
});

test('an authenticating client against a server without authentication is refused', async (t) => {
  const logged = captureLog(t);
  const { accepted, dialled } = connect(options('server:1'), options('client-a', 'sec'));
  await assert.rejects(dialled, rpcError(RpcErrorCode.AuthenticationFailed, /wick\.authenticate/));
  await assert.rejects(accepted, rpcError(RpcErrorCode.AuthenticationFailed));
  assert.ok(
    logged.some((l) => /WARN.*Refused client-a.*asked to authenticate/.test(l)),
    logged.join('\n'),
  );
});

test('a handshake not done within the timeout fails on both sides and closes the stream', async () => {
  const clock = new ManualClock(0);
  const [a, b] = duplexPair();
  const serverStream = new FramedStream(a, MAX, 'client-socket', testProtocol);
  // The client side's stream is never given a handshake: it says nothing.
  new FramedStream(b, MAX, 'server-socket', testProtocol);
  const accepted = acceptHandshake(
    serverStream,
    { ...options('server:1', undefined, clock), timeoutMs: 250 },
    () => {
      throw new Error('must not open');
    },
  );
  let settled = false;
  accepted.catch(() => {
    settled = true;
  });
  clock.advance(249);
  await new Promise((r) => setImmediate(r));
  assert.equal(settled, false);
  clock.advance(1);
  await assert.rejects(
    accepted,
    rpcError(
      RpcErrorCode.ConnectFailed,
      /did not finish within 250 ms \(wick\.rpc\.connectTimeout\)/,
    ),
  );
  assert.ok(serverStream.isClosed);
  assert.equal(clock.pendingTimers(), 0);
});

test('the timeout is cancelled once the handshake is done', async () => {
  const clock = new ManualClock(0);
  const { accepted, dialled } = connect(
    options('server:1', 'sec', clock),
    options('client-a', 'sec', clock),
  );
  const [server] = await Promise.all([accepted, dialled]);
  assert.equal(clock.pendingTimers(), 0);
  clock.advance(60_000);
  assert.ok(server.isOpen);
});

test('what the server writes as it opens comes after its reply, even in the same tick', async () => {
  const [a, b] = duplexPair();
  const serverStream = new FramedStream(a, MAX, 'client-socket', testProtocol);
  const clientStream = new FramedStream(b, MAX, 'server-socket', testProtocol);
  const notes: JSONRPCRequest[] = [];
  const accepted = acceptHandshake(serverStream, options('server:1', 'sec'), (peer, principal) => {
    const s = new Session(
      serverStream,
      { peer, principal, direction: 'inbound', clock: systemClock },
      echoHost(),
    );
    // What an outbox queued for this peer, written the moment it is open.
    s.notify('Queued', { n: 1 });
    s.notify('Queued', { n: 2 });
    return s;
  });
  const dialled = dialHandshake(
    clientStream,
    options('client-a', 'sec'),
    (peer, principal) =>
      new Session(
        clientStream,
        { peer, principal, direction: 'outbound', clock: systemClock },
        echoHost(notes),
      ),
  );
  await Promise.all([accepted, dialled]);
  // Written before the reply, they would reach a client still handshaking, which drops them.
  await within(
    5_000,
    waitFor('both notifications', () => notes.length === 2),
    'the notifications',
  );
  assert.deepEqual(
    notes.map((n) => n.params),
    [{ n: 1 }, { n: 2 }],
  );
});

describe('derived keys: who a connection proves to be', () => {
  const SECRET = 'the-cluster-secret-0123';
  const appKey = deriveKey(SECRET, 'app', 'app-1');
  const withCredential = (address: string, credential: Credential): HandshakeOptions => ({
    address,
    credential,
    keys: undefined,
    clock: systemClock,
    timeoutMs: 5_000,
  });

  test("an application's key opens a master's door as app:<id>, and the client sees that app", async () => {
    const { accepted, dialled } = connect(
      options('master:1', SECRET),
      withCredential('client-exec', { kind: 'app', id: 'app-1', key: appKey }),
    );
    const [server, client] = await Promise.all([accepted, dialled]);
    assert.deepEqual(server.principal, { kind: 'app', id: 'app-1' });
    assert.deepEqual(client.principal, { kind: 'app', id: 'app-1' });
  });

  test("a submission's key: the server that proved it is the cluster", async () => {
    const key = deriveKey(SECRET, 'submission', 'submission-9');
    const { accepted, dialled } = connect(
      options('master:1', SECRET),
      withCredential('client-driver', { kind: 'submission', id: 'submission-9', key }),
    );
    const [server, client] = await Promise.all([accepted, dialled]);
    assert.deepEqual(server.principal, { kind: 'submission', id: 'submission-9' });
    assert.deepEqual(client.principal, { kind: 'cluster' });
  });

  test("one application's key claimed for another fails: the key is the id's", async () => {
    const { accepted, dialled } = connect(
      options('master:1', SECRET),
      withCredential('client-exec', { kind: 'app', id: 'app-2', key: appKey }),
    );
    await assert.rejects(
      dialled,
      rpcError(RpcErrorCode.AuthenticationFailed, /proof does not match/),
    );
    await assert.rejects(accepted);
  });

  test('a driver takes its own application key and nothing else, not even the cluster secret', async () => {
    const ring = new AppKeyRing();
    ring.add('app-1', appKey);
    const driver: HandshakeOptions = {
      address: 'driver:1',
      credential: undefined,
      keys: ring,
      clock: systemClock,
      timeoutMs: 5_000,
    };
    const ok = connect(
      driver,
      withCredential('client-exec', { kind: 'app', id: 'app-1', key: appKey }),
    );
    assert.deepEqual((await ok.accepted).principal, { kind: 'app', id: 'app-1' });
    const other = connect(driver, options('client-admin', SECRET));
    await assert.rejects(other.dialled, /does not accept cluster keys/);
    await assert.rejects(other.accepted);
  });
});
