/**
 * RpcEnv.create binding its port, each env in its own process: port 0, a busy port retried
 * upwards up to wick.port.maxRetries, and client mode, which binds nothing and is reached over
 * the connection it opened.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RpcErrorCode } from '../../backend/rpc/index.js';
import { checkNothingLeftRunning } from '../helpers/leaks.js';
import { connectionsBetween, HeldPorts, tcpSocketsOf } from '../helpers/net.js';
import { Peer, waitForStderr } from '../helpers/peer.js';
import '../fixtures/testMessages.js';

checkNothingLeftRunning();

function portOf(address: string): number {
  return Number(address.slice(address.lastIndexOf(':') + 1));
}

function listeningPorts(pid: number): number[] {
  return tcpSocketsOf(pid)
    .filter((s) => s.state === 'LISTEN')
    .map((s) => portOf(s.local));
}

test('port 0 binds a free port the OS picks, and the env serves on it', async (t) => {
  const [a, b] = await Promise.all([
    Peer.start(t, { name: 'zero-a', port: 0 }),
    Peer.start(t, { name: 'zero-b', port: 0 }),
  ]);
  assert.match(a.address, /^127\.0\.0\.1:\d+$/);
  assert.notEqual(portOf(a.address), 0);
  assert.notEqual(a.address, b.address);
  assert.deepEqual(listeningPorts(a.pid), [portOf(a.address)]);
  const pong = await a.ask(b.address, 'Echo', { type: 'Ping', seq: 1 });
  assert.deepEqual(pong.reply, { type: 'Pong', seq: 1 });
});

test('a busy port is retried upwards until a free one binds', async (t) => {
  const held = await HeldPorts.acquire(3);
  t.after(() => held.releaseAll());
  await held.release(held.base + 2);
  const peer = await Peer.start(t, { name: 'retry', port: held.base });
  assert.equal(peer.address, `127.0.0.1:${held.base + 2}`);
  assert.deepEqual(listeningPorts(peer.pid), [held.base + 2]);
  // Spark's warning, once per busy port (stderr is a separate pipe, so it may still be coming).
  await waitForStderr(peer, new RegExp(`could not bind on port ${held.base + 1}\\. Attempting`));
  assert.match(peer.stderr, new RegExp(`could not bind on port ${held.base}\\. Attempting`));
  const pong = await peer.ask(peer.address, 'Echo', { type: 'Ping', seq: 2 });
  assert.deepEqual(pong.reply, { type: 'Pong', seq: 2 });
});

test('binding fails after wick.port.maxRetries, naming the ports tried and the setting', async (t) => {
  const held = await HeldPorts.acquire(3);
  t.after(() => held.releaseAll());
  const { base } = held;
  await assert.rejects(
    Peer.start(t, { name: 'no-room', port: base, conf: { 'wick.port.maxRetries': '2' } }),
    (err: Error) => {
      assert.match(
        err.message,
        new RegExp(`ports ${base} to ${base + 2} are all in use \\(wick\\.port\\.maxRetries=2\\)`),
      );
      return true;
    },
  );
});

test('a client-mode env binds nothing, yet receives sends and answers asks over its own connection', async (t) => {
  const [server, client] = await Promise.all([
    Peer.start(t, { name: 'server' }),
    Peer.start(t, { name: 'driver', clientMode: true }),
  ]);
  assert.match(client.address, /^client-/);
  assert.deepEqual(listeningPorts(client.pid), []);

  // The client speaks first: that opens the only connection there can be between them.
  assert.equal(
    (await client.send(server.address, 'Echo', { type: 'TestRecord', value: 'hi' })).ok,
    true,
  );
  await server.waitForLog(t, 'Echo', (l) => l.includes(`record:hi from ${client.address}`));

  // Now the server reaches the client by its client-… address, over that connection.
  const pong = await server.ask(client.address, 'Echo', { type: 'Ping', seq: 3, payload: 'back' });
  assert.deepEqual(pong.reply, { type: 'Pong', seq: 3, payload: 'back' });
  assert.equal((await server.verify(client.address, 'Echo')).ok, true);
  await server.send(client.address, 'Echo', { type: 'TestRecord', value: 'from-server' });
  const log = await client.waitForLog(t, 'Echo', (l) =>
    l.includes(`record:from-server from ${server.address}`),
  );
  assert.ok(log.includes(`onConnected:${server.address}`), JSON.stringify(log));

  assert.equal(connectionsBetween(client.pid, server.pid).length, 1);
  assert.deepEqual(listeningPorts(client.pid), []);

  // Once the client is gone there is no way to reach it, and the error says why.
  await client.kill();
  await server.waitForLog(t, 'Echo', (l) => l.includes(`onDisconnected:${client.address}`));
  const gone = await server.ask(client.address, 'Echo', { type: 'Ping', seq: 4 });
  assert.equal(gone.ok, false);
  assert.equal(gone.code, RpcErrorCode.ConnectFailed);
  assert.match(gone.error ?? '', /No connection to client-mode RpcEnv client-/);
});
