/**
 * RpcEndpointRef.flush over a real socket to a peer in another process: the sends of one turn go
 * out in one write at its end, unless flushed. This process holds its turn for a while after
 * sending, and the peer notes when each message reached it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RpcEnv } from '../../backend/rpc/index.js';
import { RecordingEndpoint } from '../fixtures/RecordingEndpoint.js';
import { TestRecord } from '../fixtures/testMessages.js';
import { Peer } from '../helpers/peer.js';
import { waitFor } from '../helpers/processes.js';
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

test('flush() on a ref to this process or to a peer still being connected to loses, repeats and reorders nothing', async (t) => {
  const peer = await Peer.start(t, { name: 'flushPeer' });
  const env = await RpcEnv.create({ protocol: testProtocol, name: 'flushAlone', port: 0 });
  t.after(() => env.stop());
  const local = new RecordingEndpoint();
  const self = env.setupEndpoint('Local', local);
  // Not set up: the first send starts the connection, and the flushes come while it is made.
  const remote = env.endpointRef({ address: peer.address, name: 'Echo' });
  for (const value of ['a', 'b', 'c']) {
    for (const ref of [self, remote]) {
      ref.send(TestRecord({ value }));
      ref.flush();
    }
  }
  // Sent last and not flushed: once it is there, all the flushed ones before it are too.
  for (const ref of [self, remote]) ref.send(TestRecord({ value: 'end' }));
  const expected = ['a', 'b', 'c', 'end'].map((v) => `record:${v} from ${env.address}`);
  const records = (log: string[]) => log.filter((l) => l.startsWith('record:'));
  const log = await peer.waitForLog(t, 'Echo', (l) => l.includes(`record:end from ${env.address}`));
  assert.deepEqual(records(log), expected);
  await waitFor(
    'the local end',
    () => local.entries.some((e) => e.startsWith('record:end')),
    t.signal,
  );
  assert.deepEqual(records(local.entries), expected);
});
