/**
 * RpcEnv.connectionStats, what the metrics read: the sessions open now by direction and the peers
 * they reach, between two real envs on loopback, back to none when the peer goes.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RpcEndpoint, RpcEnv } from '../../backend/rpc/index.js';
import { checkNothingLeftRunning } from '../helpers/leaks.js';
import { testProtocol } from '../helpers/protocol.js';

checkNothingLeftRunning();

class Gone extends RpcEndpoint {
  private onGone: (address: string) => void = () => {};
  readonly disconnected = new Promise<string>((r) => {
    this.onGone = r;
  });
  override onDisconnected(address: string): void {
    this.onGone(address);
  }
}

test('sessions by direction and peers, counted when asked', { timeout: 30_000 }, async (t) => {
  const server = await RpcEnv.create({ protocol: testProtocol, name: 'server' });
  t.after(() => server.stop());
  assert.deepEqual(server.connectionStats(), { sockets: 0, inbound: 0, outbound: 0, peers: 0 });
  const watcher = new Gone();
  server.setupEndpoint('Watcher', watcher);

  const client = await RpcEnv.create({ protocol: testProtocol, name: 'client', clientMode: true });
  t.after(() => client.stop());
  const ref = await client.setupEndpointRef(server.address, 'Watcher');
  assert.equal(ref.address, server.address);
  assert.deepEqual(client.connectionStats(), { sockets: 1, inbound: 0, outbound: 1, peers: 1 });
  assert.deepEqual(server.connectionStats(), { sockets: 1, inbound: 1, outbound: 0, peers: 1 });

  await client.stop();
  await watcher.disconnected;
  assert.deepEqual(server.connectionStats(), { sockets: 0, inbound: 0, outbound: 0, peers: 0 });
});
