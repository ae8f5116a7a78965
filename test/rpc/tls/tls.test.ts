/**
 * TLS on the RPC port, between real processes (the peer fixture) and this one: wick.ssl.loopback
 * puts loopback under the rules of every other address, so each case runs here. A Ping over TLS
 * works with the secret and open; a plaintext peer is answered with the sentence that says what
 * to do; a pinned master that serves another certificate is refused naming both fingerprints; and
 * a machine in between that terminates TLS with its own certificate and relays the frames gets
 * nowhere, because each side's proof covers the certificate it saw.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, type TestContext, test } from 'node:test';
import tls from 'node:tls';
import { WickConf } from '../../../backend/conf/WickConf.js';
import { RpcEnv } from '../../../backend/rpc/index.js';
import { parseMasterUrls } from '../../../backend/rpc/masterUrls.js';
import { makeSelfSigned } from '../../../backend/rpc/tls/selfSigned.js';
import { Peer } from '../../helpers/peer.js';
import '../../fixtures/testMessages.js';
import { testProtocol } from '../../helpers/protocol.js';

process.env.XDG_CONFIG_HOME = mkdtempSync(join(tmpdir(), 'wick-tls-test-'));
delete process.env.WICK_AUTH_SECRET;

const SECRET = 'wick-tls-test-secret-Rq81vX';
const TLS = { 'wick.ssl.loopback': 'true' };
const AUTH = { 'wick.authenticate': 'true', 'wick.authenticate.secret': SECRET };

let server: Peer;
let open: Peer;

before(async () => {
  [server, open] = await Promise.all([
    Peer.start(undefined, { name: 'tls', conf: { ...TLS, ...AUTH } }),
    Peer.start(undefined, { name: 'tls-open', conf: { ...TLS, 'wick.authenticate': 'false' } }),
  ]);
});

after(async () => {
  await Promise.all([server?.kill(), open?.kill()]);
});

async function clientEnv(t: TestContext, conf: Record<string, string>): Promise<RpcEnv> {
  const env = await RpcEnv.create({
    protocol: testProtocol,
    name: 'tls-client',
    clientMode: true,
    conf: new WickConf(conf),
  });
  t.after(() => env.stop());
  return env;
}

const ping = async (env: RpcEnv, address: string, seq = 1) =>
  assert.deepEqual(await env.endpointRef({ address, name: 'Echo' }).ask({ type: 'Ping', seq }), {
    type: 'Pong',
    seq,
  });

/** The fingerprint the server serves, as a TLS client sees it. */
function servedFingerprint(address: string): Promise<string> {
  const [host, port] = address.split(':') as [string, string];
  return new Promise((resolve, reject) => {
    const s = tls.connect({ host, port: Number(port), rejectUnauthorized: false }, () => {
      const fp = s.getPeerCertificate().fingerprint256.replaceAll(':', '').toLowerCase();
      s.destroy();
      resolve(`sha256:${fp}`);
    });
    s.once('error', reject);
  });
}

describe('RPC over TLS 1.3', { timeout: 60_000 }, () => {
  test('a Ping with the secret, and open, goes over TLS 1.3', async (t) => {
    const env = await clientEnv(t, { ...TLS, ...AUTH });
    await ping(env, server.address);
    const openEnv = await clientEnv(t, { ...TLS, 'wick.authenticate': 'false' });
    await ping(openEnv, open.address);
    // What the server speaks, seen by a client of Node's own.
    const [host, port] = server.address.split(':') as [string, string];
    const version = await new Promise<string | null>((resolve, reject) => {
      const s = tls.connect({ host, port: Number(port), rejectUnauthorized: false }, () => {
        resolve(s.getProtocol());
        s.destroy();
      });
      s.once('error', reject);
    });
    assert.equal(version, 'TLSv1.3');
  });

  test('a plaintext peer is refused with what to do, under its own id', async () => {
    const [host, port] = server.address.split(':') as [string, string];
    const socket = net.connect({ host, port: Number(port) });
    socket.write(
      `${JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'wick.hello', params: { version: 1, from: 'x:1' } })}\n`,
    );
    let text = '';
    for await (const chunk of socket) text += chunk;
    const reply = JSON.parse(text.trim()) as {
      id: number;
      error: { code: number; message: string };
    };
    assert.equal(reply.id, 7);
    assert.equal(reply.error.code, -32005);
    assert.match(reply.error.message, /requires TLS 1\.3/);
    assert.match(reply.error.message, /wick\.ssl\.enabled/);
    assert.match(reply.error.message, /sha256:[0-9a-f]{64}/);
  });

  test('a Wick peer with wick.ssl.enabled=false gets that sentence', async (t) => {
    const env = await clientEnv(t, { ...AUTH, 'wick.ssl.enabled': 'false' });
    await assert.rejects(ping(env, server.address), /requires TLS 1\.3/);
  });

  test('a master pinned to another fingerprint is refused, naming both', async (t) => {
    const served = await servedFingerprint(server.address);
    const wrong = `sha256:${'ab'.repeat(32)}`;
    // The server is this process's master: its address came from a master URL.
    parseMasterUrls(`wick://${server.address}`);
    const env = await clientEnv(t, { ...TLS, ...AUTH, 'wick.ssl.fingerprint': wrong });
    const err = await ping(env, server.address).then(
      () => assert.fail('the ping went through'),
      (e: Error & { code?: number }) => e,
    );
    assert.equal(err.code, -32005, err.message);
    assert.ok(err.message.includes(served), err.message);
    assert.ok(err.message.includes(wrong), err.message);
    assert.match(err.message, /wick join/);
    // The right one, in the colon-separated form a browser shows, lets it in.
    const colons = (served.slice(7).match(/../g) as string[]).join(':').toUpperCase();
    const right = await clientEnv(t, { ...TLS, ...AUTH, 'wick.ssl.fingerprint': colons });
    await ping(right, server.address);
  });

  test('a machine in between with its own certificate cannot relay the handshake', async (t) => {
    const [host, port] = server.address.split(':') as [string, string];
    const own = await makeSelfSigned('mitm', ['127.0.0.1'], 1);
    let relayed = 0;
    const mitm = tls.createServer({ cert: own.certPem, key: own.keyPem }, (inner) => {
      const outer = tls.connect({ host, port: Number(port), rejectUnauthorized: false });
      inner.on('data', (d) => {
        relayed += d.length;
      });
      inner.pipe(outer).pipe(inner);
      inner.on('error', () => outer.destroy());
      outer.on('error', () => inner.destroy());
    });
    await new Promise<void>((r) => mitm.listen(0, '127.0.0.1', r));
    t.after(() => mitm.close());
    const env = await clientEnv(t, { ...TLS, ...AUTH });
    const address = `127.0.0.1:${(mitm.address() as net.AddressInfo).port}`;
    await assert.rejects(ping(env, address), (e: Error & { code?: number }) => {
      assert.equal(e.code, -32005, e.message);
      return true;
    });
    assert.ok(relayed > 0, 'the relay carried the handshake');
    // Direct, the same client gets in.
    await ping(env, server.address);
  });
});
