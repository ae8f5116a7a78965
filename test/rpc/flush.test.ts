/**
 * RpcEndpointRef.flush over a real socket to a peer in another process: the sends of one turn go
 * out in one write at its end, unless flushed. This process holds its turn for a while after
 * sending, and the peer notes when each message reached it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RpcEnv } from '../../backend/rpc/index.js';
import { TestRecord } from '../fixtures/testMessages.js';
import { Peer } from '../helpers/peer.js';
import { testProtocol } from '../helpers/protocol.js';

/** Keeps this thread (and so the turn) busy for `ms`. */
function holdTurn(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

test('what was sent before flush() reaches the peer during the turn; what came after waits for its end', async (t) => {
  const peer = await Peer.start(t, { name: 'flushPeer' });
  const env = await RpcEnv.create({
    protocol: testProtocol,
    name: 'flushSender',
    clientMode: true,
  });
  t.after(() => env.stop());
  const ref = await env.setupEndpointRef(peer.address, 'Echo');

  ref.send(TestRecord({ value: 'first' }));
  ref.flush();
  ref.send(TestRecord({ value: 'second' }));
  holdTurn(1_000);
  const turnEnded = Date.now();

  await peer.waitForLog(t, 'Echo', (log) => log.some((l) => l.startsWith('record:second')));
  const at = await peer.recordedAt('Echo');
  assert.ok(
    (at.first as number) < turnEnded,
    `the flushed message arrived ${(at.first as number) - turnEnded} ms after the turn ended`,
  );
  assert.ok(
    (at.second as number) >= turnEnded,
    `the message sent after flush() arrived ${turnEnded - (at.second as number)} ms before the turn ended`,
  );
});

test('flush() on a ref to this process or to a peer not connected yet is harmless', async (t) => {
  const env = await RpcEnv.create({ protocol: testProtocol, name: 'flushAlone', port: 0 });
  t.after(() => env.stop());
  env.endpointRef({ address: env.address, name: 'Nobody' }).flush();
  env.endpointRef({ address: '127.0.0.1:1', name: 'Nobody' }).flush();
});
