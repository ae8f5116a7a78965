/**
 * The dialling side of the handshake, with the server played by hand over an in-memory stream:
 * what it writes, what it accepts as a reply, and requests that come in the same chunk as the
 * server's reply.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { JSONRPCRequest } from 'json-rpc-2.0';
import { RpcErrorCode } from '../../backend/protocol/errors.js';
import { serverProof } from '../../backend/rpc/auth.js';
import { dialHandshake } from '../../backend/rpc/ClientHandshake.js';
import { FramedStream } from '../../backend/rpc/FramedStream.js';
import { successResponse } from '../../backend/rpc/responses.js';
import { Session } from '../../backend/rpc/Session.js';
import { systemClock } from '../../backend/util/clock.js';
import { setLogSink } from '../../backend/util/log.js';
import { duplexPair, RawEnd } from '../helpers/duplexPair.js';
import { testProtocol } from '../helpers/protocol.js';
import { secretAuth } from '../helpers/secretAuth.js';

/** A client phase on one end of a pair; `served` lists what its session was sent, in order. */
function dial(secret?: string) {
  const [a, b] = duplexPair();
  const stream = new FramedStream(a, 1024 * 1024, 'raw-server', testProtocol);
  const served: JSONRPCRequest[] = [];
  const dialled = dialHandshake(
    stream,
    { address: 'client-a', ...secretAuth(secret), clock: systemClock, timeoutMs: 30_000 },
    (peer, principal) =>
      new Session(
        stream,
        { peer, principal, direction: 'outbound', clock: systemClock },
        {
          handleRequest(req) {
            served.push(req);
            return req.id === undefined ? null : successResponse(req.id, { served: req.method });
          },
        },
      ),
  );
  dialled.catch(() => {});
  return { raw: new RawEnd(b), dialled, stream, served };
}

function quietLog(t: { after: (fn: () => void) => void }): void {
  const prev = setLogSink(() => {});
  t.after(() => {
    setLogSink(prev);
  });
}

test('wick.hello goes out as docs/protocol.md shows it, byte for byte', async () => {
  const { raw } = dial();
  await raw.take();
  assert.equal(
    raw.chunks.join(''),
    '{"jsonrpc":"2.0","id":1,"method":"wick.hello","params":{"version":1,"from":"client-a"}}\n',
  );
});

test("requests in the same chunk as the server's reply reach the session, in order", async () => {
  const { raw, dialled, served } = dial();
  const h = await raw.take();
  raw.send(
    { jsonrpc: '2.0', id: h.id, result: { version: 1, from: 'server:1' } },
    { jsonrpc: '2.0', id: 'srv-1', method: 'First', params: {} },
    { jsonrpc: '2.0', method: 'Second', params: {} },
  );
  const session = await dialled;
  assert.equal(session.peer, 'server:1');
  const answer = await raw.take();
  assert.equal(answer.id, 'srv-1');
  assert.deepEqual(answer.result, { served: 'First' });
  assert.deepEqual(
    served.map((r) => r.method),
    ['First', 'Second'],
  );
});

test("with authentication, requests behind the server's wick.auth reply reach the session", async () => {
  const secret = 'client-handshake-secret';
  const { raw, dialled, served } = dial(secret);
  const h = await raw.take();
  const nonce = h.params?.nonce as string;
  const challenge = 'c'.repeat(32);
  raw.send({
    jsonrpc: '2.0',
    id: h.id,
    result: {
      version: 1,
      from: 'server:1',
      challenge,
      proof: serverProof(secret, nonce, challenge),
    },
  });
  const auth = await raw.take();
  assert.equal(auth.method, 'wick.auth');
  raw.send(
    { jsonrpc: '2.0', id: auth.id, result: { ok: true } },
    { jsonrpc: '2.0', method: 'Right', params: {} },
  );
  await dialled;
  // Served within the chunk that opened the session, before its promise settled.
  assert.deepEqual(
    served.map((r) => r.method),
    ['Right'],
  );
});

test("the session's own requests take ids after the handshake's", async () => {
  const { raw, dialled } = dial();
  const h = await raw.take();
  raw.send({ jsonrpc: '2.0', id: h.id, result: { version: 1, from: 'server:1' } });
  const session = await dialled;
  const reply = session.request('Ask', {}, 5_000, 'late');
  const ask = await raw.take();
  assert.equal(ask.id, 2);
  raw.send({ jsonrpc: '2.0', id: 2, result: { fine: true } });
  assert.deepEqual(await reply, { fine: true });
});

test('a reply to something else is ignored; the real one opens', async () => {
  const { raw, dialled } = dial();
  const h = await raw.take();
  raw.send(
    { jsonrpc: '2.0', id: 99, result: { version: 1, from: 'impostor:1' } },
    { jsonrpc: '2.0', id: h.id, result: { version: 1, from: 'server:1' } },
  );
  assert.equal((await dialled).peer, 'server:1');
});

test('an invalid HelloResult fails the handshake and closes', async () => {
  const { raw, dialled, stream } = dial();
  const h = await raw.take();
  raw.send({ jsonrpc: '2.0', id: h.id, result: { version: 2, from: 'server:1' } });
  await assert.rejects(dialled, (err: Error & { code?: number }) => {
    assert.equal(err.code, RpcErrorCode.InvalidRequest);
    assert.match(err.message, /answered wick\.hello with .*not a valid HelloResult/);
    return true;
  });
  assert.ok(stream.isClosed);
  await raw.closed;
});

test("the server's error reply fails the handshake with its code and message", async () => {
  const { raw, dialled } = dial();
  const h = await raw.take();
  raw.send({
    jsonrpc: '2.0',
    id: h.id,
    error: { code: RpcErrorCode.AuthenticationFailed, message: 'go away' },
  });
  await assert.rejects(dialled, (err: Error & { code?: number }) => {
    assert.equal(err.code, RpcErrorCode.AuthenticationFailed);
    assert.equal(err.message, 'go away');
    return true;
  });
});

test('a server that skips authentication for an authenticating client is refused (a downgrade)', async (t) => {
  quietLog(t);
  const { raw, dialled } = dial('sec');
  const h = await raw.take();
  raw.send({ jsonrpc: '2.0', id: h.id, result: { version: 1, from: 'server:1' } });
  await assert.rejects(dialled, (err: Error & { code?: number }) => {
    assert.equal(err.code, RpcErrorCode.AuthenticationFailed);
    assert.match(err.message, /does not authenticate/);
    return true;
  });
  assert.equal(raw.frames.length, 0, 'no wick.auth was sent');
});

test('a server that hangs up fails the handshake with ConnectionClosed', async () => {
  const { raw, dialled } = dial();
  await raw.take();
  raw.stream.end();
  await assert.rejects(dialled, (err: Error & { code?: number }) => {
    assert.equal(err.code, RpcErrorCode.ConnectionClosed);
    assert.match(err.message, /Connection to raw-server closed/);
    return true;
  });
});

test('a request before the reply is told the handshake is not done', async () => {
  const { raw, served } = dial();
  await raw.take();
  raw.send({ jsonrpc: '2.0', id: 7, method: 'TooEarly', params: {} });
  const r = await raw.take();
  assert.equal(r.error?.code, RpcErrorCode.HandshakeRequired);
  assert.deepEqual(served, []);
});
