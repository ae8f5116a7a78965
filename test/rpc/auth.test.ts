/**
 * wick.authenticate: an HMAC challenge–response before any message. Same secret → asks work;
 * a wrong secret, a missing one, or authentication on one side only → refused, and both sides
 * say why. The secret itself never crosses the wire.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, type TestContext, test } from 'node:test';
import { WickConf } from '../../backend/conf/WickConf.js';
import { clientProof, newNonce, serverProof } from '../../backend/rpc/auth.js';
import { RpcEnv } from '../../backend/rpc/index.js';
import { Peer, RawClient, waitForStderr } from '../helpers/peer.js';
import '../fixtures/testMessages.js';
import { testProtocol } from '../helpers/protocol.js';
import { captureLog } from '../helpers/rpcAsserts.js';

/** Only against hangs (every wait here is on an event, never on a clock). */
// This file decides every secret itself: no default secret file (another test's master may have
// made this run's), so that a process given none has none.
process.env.XDG_CONFIG_HOME = mkdtempSync(join(tmpdir(), 'wick-auth-test-'));

const HANG_GUARD_MS = 60_000;

const AuthenticationFailed = -32005;
const HandshakeRequired = -32006;
const SECRET = 'wick-test-secret-Zq81vX';
const ENV_SECRET = 'wick-env-secret-Kp22rT';

const authConf = (secret: string) => ({
  'wick.authenticate': 'true',
  'wick.authenticate.secret': secret,
});

/** Auth on, secret from conf; auth on, secret from WICK_AUTH_SECRET; auth off. */
let authPeer: Peer;
let envPeer: Peer;
let plainPeer: Peer;
const savedEnvSecret = process.env.WICK_AUTH_SECRET;

before(async () => {
  delete process.env.WICK_AUTH_SECRET;
  [authPeer, envPeer, plainPeer] = await Promise.all([
    Peer.start(undefined, { name: 'auth', conf: authConf(SECRET) }),
    Peer.start(undefined, {
      name: 'auth-env',
      conf: { 'wick.authenticate': 'true' },
      env: { WICK_AUTH_SECRET: ENV_SECRET },
    }),
    Peer.start(undefined, { name: 'plain' }),
  ]);
});

after(async () => {
  if (savedEnvSecret !== undefined) process.env.WICK_AUTH_SECRET = savedEnvSecret;
  await Promise.all([authPeer?.kill(), envPeer?.kill(), plainPeer?.kill()]);
});

/** A client-mode env in this process, stopped when the test ends. */
async function clientEnv(t: TestContext, conf: Record<string, string> = {}): Promise<RpcEnv> {
  const env = await RpcEnv.create({
    protocol: testProtocol,
    name: 'auth-client',
    clientMode: true,
    conf: new WickConf(conf),
  });
  t.after(() => env.stop());
  return env;
}

async function ping(env: RpcEnv, address: string, seq = 1): Promise<void> {
  const reply = await env.endpointRef({ address, name: 'Echo' }).ask({ type: 'Ping', seq });
  assert.deepEqual(reply, { type: 'Pong', seq });
}

type CodedError = Error & { code?: number };

describe('peers that share the secret', { timeout: HANG_GUARD_MS }, () => {
  test('wick.authenticate.secret on both sides: asks work', async (t) => {
    const env = await clientEnv(t, authConf(SECRET));
    await ping(env, authPeer.address);
    await ping(env, authPeer.address, 2);
  });

  test('WICK_AUTH_SECRET on the server, the same secret in conf on the client', async (t) => {
    const env = await clientEnv(t, authConf(ENV_SECRET));
    await ping(env, envPeer.address);
  });

  test('WICK_AUTH_SECRET on the client (a peer process) against a conf secret', async (t) => {
    const asker = await Peer.start(t, {
      name: 'env-client',
      clientMode: true,
      conf: { 'wick.authenticate': 'true' },
      env: { WICK_AUTH_SECRET: SECRET },
    });
    const r = await asker.ask(authPeer.address, 'Echo', { type: 'Ping', seq: 3 });
    assert.ok(r.ok, r.error);
    assert.deepEqual(r.reply, { type: 'Pong', seq: 3 });
  });

  test('WICK_AUTH_SECRET in this process, read when the env is created', async (t) => {
    process.env.WICK_AUTH_SECRET = ENV_SECRET;
    let env: RpcEnv;
    try {
      env = await clientEnv(t, { 'wick.authenticate': 'true' });
    } finally {
      delete process.env.WICK_AUTH_SECRET;
    }
    await ping(env, envPeer.address);
  });

  test('the conf secret wins over WICK_AUTH_SECRET', async (t) => {
    process.env.WICK_AUTH_SECRET = 'not-the-one-at-all';
    let env: RpcEnv;
    try {
      env = await clientEnv(t, authConf(SECRET));
    } finally {
      delete process.env.WICK_AUTH_SECRET;
    }
    await ping(env, authPeer.address);
  });
});

describe('peers that are refused', { timeout: HANG_GUARD_MS }, () => {
  test('a wrong secret: the client is told authentication failed; both sides log why', async (t) => {
    const logged = captureLog(t);
    const mark = authPeer.stderr.length;
    const env = await clientEnv(t, authConf('a-wrong-secret-xyz'));
    await assert.rejects(ping(env, authPeer.address), (err: CodedError) => {
      assert.equal(err.code, AuthenticationFailed, err.message);
      assert.match(err.message, /fail(ed)? authentication|authentication failed/i);
      assert.match(err.message, /secret/);
      assert.ok(!err.message.includes('a-wrong-secret-xyz'), 'the secret is not in the error');
      return true;
    });
    assert.ok(
      logged.some((l) => /WARN/.test(l) && /authentication/i.test(l) && /secret/.test(l)),
      logged.join('\n'),
    );
    const line = await waitForStderr(authPeer, /WARN[^\n]*Refused[^\n]*/, mark);
    assert.match(line, /authenticat/);
    assert.match(line, /secret/);
    assert.ok(!authPeer.stderr.includes(SECRET), 'the server does not log its secret');
    // The server goes on serving peers with the right secret.
    await ping(await clientEnv(t, authConf(SECRET)), authPeer.address);
  });

  test('a client without authentication against an auth server: authentication required', async (t) => {
    const mark = authPeer.stderr.length;
    const env = await clientEnv(t);
    await assert.rejects(ping(env, authPeer.address), (err: CodedError) => {
      assert.equal(err.code, AuthenticationFailed, err.message);
      assert.match(err.message, /authentication required/i);
      assert.match(err.message, /wick\.authenticate/);
      return true;
    });
    const line = await waitForStderr(authPeer, /WARN[^\n]*Refused[^\n]*/, mark);
    assert.match(line, /did not authenticate/);
    assert.match(line, new RegExp(env.address));
    await ping(await clientEnv(t, authConf(SECRET)), authPeer.address);
  });

  test('an authenticating client against a server without authentication', async (t) => {
    const mark = plainPeer.stderr.length;
    const env = await clientEnv(t, authConf(SECRET));
    await assert.rejects(ping(env, plainPeer.address), (err: CodedError) => {
      assert.equal(err.code, AuthenticationFailed, err.message);
      assert.match(err.message, /wick\.authenticate/);
      return true;
    });
    const line = await waitForStderr(plainPeer, /WARN[^\n]*Refused[^\n]*/, mark);
    assert.match(line, /asked to authenticate/);
    await ping(await clientEnv(t), plainPeer.address);
  });

  test('a server that answers without authenticating, to a client that requires it', async (t) => {
    // A raw server that accepts the hello but offers no challenge: a downgrade.
    const logged = captureLog(t);
    const sockets = new Set<net.Socket>();
    const fake = net.createServer((s) => {
      sockets.add(s);
      s.on('error', () => {});
      s.once('data', (d) => {
        const req = JSON.parse(d.toString().split('\n')[0] as string) as { id: number };
        s.write(
          `${JSON.stringify({ jsonrpc: '2.0', id: req.id, result: { version: 1, from: 'fake:1' } })}\n`,
        );
      });
    });
    await new Promise<void>((r) => fake.listen(0, '127.0.0.1', r));
    t.after(() => {
      for (const s of sockets) s.destroy();
      return new Promise<void>((r) => fake.close(() => r()));
    });
    const env = await clientEnv(t, authConf(SECRET));
    const address = `127.0.0.1:${(fake.address() as net.AddressInfo).port}`;
    await assert.rejects(ping(env, address), (err: CodedError) => {
      assert.equal(err.code, AuthenticationFailed, err.message);
      assert.match(err.message, /does not authenticate/);
      return true;
    });
    assert.ok(
      logged.some((l) => /WARN.*does not authenticate/.test(l)),
      logged.join('\n'),
    );
  });
});

describe('the handshake by hand', { timeout: HANG_GUARD_MS }, () => {
  test('a raw peer that computes the proofs as docs/protocol.md says gets in', async (t) => {
    const raw = await RawClient.connect(authPeer.address, t);
    const nonce = newNonce();
    const hello = await raw.call('wick.hello', { version: 1, from: 'client-raw', nonce });
    const res = hello.result as unknown as { challenge: string; proof: string; from: string };
    assert.equal(res.from, authPeer.address);
    assert.equal(res.proof, serverProof(SECRET, nonce, res.challenge));
    // Nothing but wick.auth is accepted until then.
    const early = await raw.ask('client-raw', 'Echo', { type: 'Ping', seq: 1 });
    assert.equal(early.error?.code, HandshakeRequired, JSON.stringify(early));
    const ok = await raw.call('wick.auth', { proof: clientProof(SECRET, nonce, res.challenge) });
    assert.deepEqual(ok.result, { ok: true });
    const pong = await raw.ask('client-raw', 'Echo', { type: 'Ping', seq: 2 });
    assert.deepEqual(pong.result, { type: 'Pong', seq: 2 });
  });

  const badProofs: Array<[string, (nonce: string, challenge: string, proof: string) => string]> = [
    ['a proof made with another secret', (n, c) => clientProof('guess', n, c)],
    ['the server proof reflected back', (_n, _c, p) => p],
    ['a proof with the nonces swapped', (n, c) => clientProof(SECRET, c, n)],
    ['an all-zero proof', () => '0'.repeat(64)],
    ['a proof that is not hex', () => 'x'.repeat(64)],
  ];
  for (const [what, make] of badProofs) {
    test(`${what} is refused and the connection closed`, async (t) => {
      const mark = authPeer.stderr.length;
      const raw = await RawClient.connect(authPeer.address, t);
      const nonce = newNonce();
      const hello = await raw.call('wick.hello', { version: 1, from: 'client-forger', nonce });
      const { challenge, proof } = hello.result as unknown as { challenge: string; proof: string };
      const r = await raw.call('wick.auth', { proof: make(nonce, challenge, proof) });
      assert.equal(r.error?.code, AuthenticationFailed, JSON.stringify(r));
      assert.match(r.error?.message ?? '', /authentication failed/i);
      await raw.waitClosed();
      await waitForStderr(
        authPeer,
        /WARN[^\n]*Refused client-forger[^\n]*authentication failed/,
        mark,
      );
      await ping(await clientEnv(t, authConf(SECRET)), authPeer.address);
    });
  }

  test('a proof recorded on one connection does not open another', async (t) => {
    const first = await RawClient.connect(authPeer.address, t);
    const nonce = newNonce();
    const h1 = await first.call('wick.hello', { version: 1, from: 'client-replay', nonce });
    const c1 = (h1.result as unknown as { challenge: string }).challenge;
    const recorded = clientProof(SECRET, nonce, c1);
    first.close();
    // Same nonce again: the server picks a fresh challenge, so the old proof is worthless.
    const second = await RawClient.connect(authPeer.address, t);
    const h2 = await second.call('wick.hello', { version: 1, from: 'client-replay', nonce });
    assert.notEqual((h2.result as unknown as { challenge: string }).challenge, c1);
    const r = await second.call('wick.auth', { proof: recorded });
    assert.equal(r.error?.code, AuthenticationFailed, JSON.stringify(r));
  });
});

describe('the secret never crosses the wire', { timeout: HANG_GUARD_MS }, () => {
  /** A TCP proxy to `target` that records every byte in both directions. */
  async function recordingProxy(t: TestContext, target: string) {
    const i = target.lastIndexOf(':');
    const [host, port] = [target.slice(0, i), Number(target.slice(i + 1))];
    const toServer: Buffer[] = [];
    const toClient: Buffer[] = [];
    const sockets = new Set<net.Socket>();
    const server = net.createServer((down) => {
      const up = net.connect({ host, port });
      for (const s of [down, up]) {
        sockets.add(s);
        s.on('error', () => {});
      }
      down.on('data', (d: Buffer) => {
        toServer.push(Buffer.from(d));
        up.write(d);
      });
      up.on('data', (d: Buffer) => {
        toClient.push(Buffer.from(d));
        down.write(d);
      });
      down.on('close', () => up.destroy());
      up.on('close', () => down.destroy());
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    t.after(() => {
      for (const s of sockets) s.destroy();
      return new Promise<void>((r) => server.close(() => r()));
    });
    return {
      address: `127.0.0.1:${(server.address() as net.AddressInfo).port}`,
      toServer: () => Buffer.concat(toServer),
      toClient: () => Buffer.concat(toClient),
    };
  }

  function assertAbsent(wire: Buffer, secret: string, direction: string): void {
    const hex = Buffer.from(secret).toString('hex');
    const forms: Array<[string, Buffer]> = [
      ['utf8', Buffer.from(secret)],
      ['utf16le', Buffer.from(secret, 'utf16le')],
      ['hex', Buffer.from(hex)],
      ['HEX', Buffer.from(hex.toUpperCase())],
      ['base64', Buffer.from(Buffer.from(secret).toString('base64').replace(/=+$/, ''))],
    ];
    for (const [form, needle] of forms) {
      assert.equal(wire.indexOf(needle), -1, `the secret (${form}) went ${direction}`);
    }
  }

  test('neither a successful nor a failed authentication puts it on the wire', async (t) => {
    const proxy = await recordingProxy(t, authPeer.address);
    const good = await clientEnv(t, authConf(SECRET));
    await ping(good, proxy.address, 1);
    await ping(good, proxy.address, 2);
    const wrongSecret = 'wick-wrong-secret-Hh55';
    const bad = await clientEnv(t, authConf(wrongSecret));
    await assert.rejects(ping(bad, proxy.address), (err: CodedError) => {
      return err.code === AuthenticationFailed;
    });
    const up = proxy.toServer();
    const down = proxy.toClient();
    // The proxy did see the handshake and the asks.
    assert.ok(up.includes('"wick.auth"') && up.includes('"nonce"'), 'client side of the handshake');
    assert.ok(down.includes('"challenge"') && down.includes('"Pong"'), 'server side');
    for (const secret of [SECRET, wrongSecret]) {
      assertAbsent(up, secret, 'client → server');
      assertAbsent(down, secret, 'server → client');
    }
  });
});

describe('wick.authenticate without a secret', { timeout: HANG_GUARD_MS }, () => {
  const noSecret = { 'wick.authenticate': 'true' };
  const emptyConfig = process.env.XDG_CONFIG_HOME as string;

  test('RpcEnv.create fails with a clear message (client mode)', async () => {
    await assert.rejects(
      RpcEnv.create({
        protocol: testProtocol,
        name: 'nosecret',
        clientMode: true,
        conf: new WickConf(noSecret),
      }),
      /wick\.authenticate is true but no secret is set.*wick\.authenticate\.secret.*WICK_AUTH_SECRET/,
    );
  });

  test('RpcEnv.create fails with a clear message and leaves no port bound', async () => {
    const probe = net.createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const port = (probe.address() as net.AddressInfo).port;
    await new Promise<void>((r) => probe.close(() => r()));
    await assert.rejects(
      RpcEnv.create({
        protocol: testProtocol,
        name: 'nosecret',
        port,
        conf: new WickConf(noSecret),
      }),
      /no secret is set/,
    );
    // The port it would have used is free again.
    const again = net.createServer();
    await new Promise<void>((resolve, reject) => {
      again.once('error', reject);
      again.listen(port, '127.0.0.1', resolve);
    });
    await new Promise<void>((r) => again.close(() => r()));
  });

  test('an empty secret counts as none', async () => {
    await assert.rejects(
      RpcEnv.create({
        protocol: testProtocol,
        name: 'empty',
        clientMode: true,
        conf: new WickConf(authConf('')),
      }),
      /no secret is set/,
    );
  });

  test('a peer process started that way exits with the message', async (t) => {
    await assert.rejects(
      Peer.start(t, {
        name: 'nosecret-peer',
        conf: noSecret,
        env: { XDG_CONFIG_HOME: emptyConfig },
      }),
      /no secret is set/,
    );
  });
});
