/**
 * What endpoints and callers see when peers come and go: onConnected / onDisconnected /
 * onNetworkError on every endpoint, and asks failing at once, not at their timeout, when the peer
 * they wait on dies.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Ping, Pong } from '../../backend/protocol/rpc.js';
import { RpcEnv, RpcError, RpcErrorCode } from '../../backend/rpc/index.js';
import { TestSleep } from '../fixtures/testMessages.js';
import { checkNothingLeftRunning } from '../helpers/leaks.js';
import { unusedPort } from '../helpers/net.js';
import { Peer } from '../helpers/peer.js';
import { testProtocol } from '../helpers/protocol.js';

checkNothingLeftRunning();

const ENDPOINTS = ['Echo', 'Other'];

/** onConnected / onDisconnected for one address, in order (a death may add an onNetworkError). */
function upDown(log: string[], address: string): string[] {
  return log.filter((e) => e === `onConnected:${address}` || e === `onDisconnected:${address}`);
}

test('every endpoint sees peers connect, stop, die, and fail to connect', async (t) => {
  const [observer, stopped, killed] = await Promise.all([
    Peer.start(t, { name: 'observer', endpoints: ENDPOINTS }),
    Peer.start(t, { name: 'stopped' }),
    Peer.start(t, { name: 'killed' }),
  ]);
  assert.equal((await stopped.ask(observer.address, 'Echo', Ping({ seq: 1 }))).ok, true);
  assert.equal((await killed.ask(observer.address, 'Other', Ping({ seq: 2 }))).ok, true);
  await stopped.stop();
  await killed.kill();
  const dead = `127.0.0.1:${await unusedPort()}`;
  const refused = await observer.ask(dead, 'Echo', Ping({ seq: 3 }));
  assert.equal(refused.code, RpcErrorCode.ConnectFailed);

  for (const name of ENDPOINTS) {
    const log = await observer.waitForLog(
      t,
      name,
      (l) =>
        l.includes(`onDisconnected:${stopped.address}`) &&
        l.includes(`onDisconnected:${killed.address}`) &&
        l.some((e) => e.startsWith(`onNetworkError:${dead}:`)),
    );
    // The two peers' events may interleave; each peer's own come in order.
    const why = `${name}: ${JSON.stringify(log)}`;
    assert.deepEqual(
      upDown(log, stopped.address),
      [`onConnected:${stopped.address}`, `onDisconnected:${stopped.address}`],
      why,
    );
    assert.deepEqual(
      upDown(log, killed.address),
      [`onConnected:${killed.address}`, `onDisconnected:${killed.address}`],
      why,
    );
    assert.deepEqual(
      log.filter((e) => e.startsWith(`onNetworkError:${dead}:`)),
      [`onNetworkError:${dead}:Failed to connect to wick://${dead}: connection refused`],
      why,
    );
  }
});

test('the side that dialled sees the listening peer disconnect too', async (t) => {
  const [server, client] = await Promise.all([
    Peer.start(t, { name: 'server' }),
    Peer.start(t, { name: 'client', clientMode: true, endpoints: ENDPOINTS }),
  ]);
  assert.equal((await client.ask(server.address, 'Echo', Ping({ seq: 1 }))).ok, true);
  await server.kill();
  for (const name of ENDPOINTS) {
    const log = await client.waitForLog(t, name, (l) =>
      l.includes(`onDisconnected:${server.address}`),
    );
    assert.deepEqual(upDown(log, server.address), [
      `onConnected:${server.address}`,
      `onDisconnected:${server.address}`,
    ]);
  }
});

test('an ask fails with ConnectionClosed as soon as its peer dies, not at its timeout', {
  timeout: 30_000,
}, async (t) => {
  const [peer, env] = await Promise.all([
    Peer.start(t, { name: 'doomed', endpoints: ENDPOINTS }),
    RpcEnv.create({ protocol: testProtocol, name: 'waiter', clientMode: true }),
  ]);
  t.after(() => env.stop());
  const echo = await env.setupEndpointRef(peer.address, 'Echo');
  const pending = echo.ask(TestSleep({ ms: 10_000 }), { timeout: 60_000 });
  // Other answers only after the peer has read the TestSleep sent before it on this connection.
  const other = env.endpointRef({ address: peer.address, name: 'Other' });
  assert.deepEqual(await other.ask(Ping({ seq: 1 })), Pong({ seq: 1 }));
  const failed = assert.rejects(pending, (err: unknown) => {
    assert.ok(err instanceof RpcError, String(err));
    assert.equal(err.code, RpcErrorCode.ConnectionClosed);
    assert.match(err.message, new RegExp(`^Connection to ${peer.address} closed`));
    return true;
  });
  await peer.kill();
  await failed;
});

test('an env whose asker dies mid-ask drops the reply and keeps serving', async (t) => {
  const [server, asker, env] = await Promise.all([
    Peer.start(t, { name: 'server', endpoints: ENDPOINTS }),
    Peer.start(t, { name: 'asker' }),
    RpcEnv.create({ protocol: testProtocol, name: 'checker', clientMode: true }),
  ]);
  t.after(() => env.stop());
  const sleeping = asker.ask(server.address, 'Echo', TestSleep({ ms: 300, tag: 'orphan' }));
  assert.equal((await asker.ask(server.address, 'Other', Ping({ seq: 1 }))).ok, true);
  await asker.kill();
  assert.equal((await sleeping).ok, false);
  // Queued behind the orphaned TestSleep, so answered after its reply found no connection.
  const echo = await env.setupEndpointRef(server.address, 'Echo');
  assert.deepEqual(await echo.ask(Ping({ seq: 2 })), Pong({ seq: 2 }));
  assert.equal(server.child.exitCode, null);
  await server.waitForLog(t, 'Echo', (l) => l.includes(`onDisconnected:${asker.address}`));
});
