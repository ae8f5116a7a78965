/**
 * The master-wide bound on relayed logs (wick.ui.reverseProxy.maxTotalBacklog), against a real
 * master, worker and executor: two clients follow a log that grows by 25 MiB through the master
 * and stop reading. Each is far under its own 32 MiB bound, but together they pass the
 * master's 1 MiB: the master ends their follows (telling the worker to stop pushing) with a
 * reason naming the setting and the offset to follow again from — so the master's memory does
 * not grow with the number of connections.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LOG_RELAY_ENDPOINT } from '../../backend/protocol/endpoints.js';
import { clusterSecret, HostilePeer } from '../helpers/hostile.js';
import { checkNothingLeftRunning } from '../helpers/leaks.js';
import {
  runExecutor,
  startLogCluster,
  testClientEnv,
  workerFollows,
} from '../helpers/logCluster.js';
import type { RawFrame } from '../helpers/peer.js';
import { waitFor } from '../helpers/processes.js';

checkNothingLeftRunning();

/** 400 lines of 64 KiB, written as fast as the pipe takes them; then it idles. */
const LOUD = `const b = 'x'.repeat(65535) + '\\n'; let i = 0;
const w = () => { while (i < 400) { i++; if (!process.stdout.write(b)) return process.stdout.once('drain', w); } };
w(); setInterval(() => {}, 1000);`;

test('the relay ends the follows of clients that together fall behind its total bound', {
  timeout: 180_000,
}, async (t) => {
  const { master, worker } = await startLogCluster(t, {
    conf: { 'wick.ui.reverseProxy.maxTotalBacklog': '1m' },
  });
  const { appId, state } = await runExecutor(t, master.url, LOUD);
  await state('RUNNING');
  const env = await testClientEnv(t);
  const secret = clusterSecret();
  const clients = await Promise.all(
    [1, 2].map(() => HostilePeer.connect(t, master.address, { kind: 'secret', secret })),
  );
  for (const c of clients) {
    const started = await c.ask(LOG_RELAY_ENDPOINT, {
      type: 'FollowLog',
      appId,
      execId: 0,
      stream: 'stdout',
      offset: 0,
      followId: 'f1',
      follower: { address: c.from, name: 'Follower' },
    });
    assert.equal(started.error, undefined, JSON.stringify(started));
    // It reads no more: what the master sends it piles up in the master.
    c.raw.socket.pause();
  }
  await waitFor(
    'the worker to serve both relayed follows',
    async () => (await workerFollows(env, worker)) === 2,
  );
  await waitFor(
    'the master to stop both relayed follows',
    async () => (await workerFollows(env, worker)) === 0,
    120_000,
  );
  for (const c of clients) {
    c.raw.discard = false;
    c.raw.socket.resume();
    const ended = await c.raw.take(
      (f: RawFrame) =>
        f.method === 'LogFollowEnded' ||
        (f.params as { message?: { type?: string } } | undefined)?.message?.type ===
          'LogFollowEnded',
    );
    const reason = JSON.stringify(ended);
    assert.match(
      reason,
      /its log clients together fell more than 1 MiB behind \(wick\.ui\.reverseProxy\.maxTotalBacklog\); follow again from offset \d+/,
    );
  }
});
