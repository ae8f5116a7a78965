/**
 * Worker liveness with a real master and wick.worker.timeout=1s: a silent worker goes DEAD, its
 * executors are LOST, and it comes back through ReconnectWorker; DEAD workers are culled after
 * wick.dead.worker.persistence timeouts. Every wait is for a pushed state or a message; the test
 * timeout is the only clock.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startMaster, startWorker, wick } from '../helpers/cluster.js';
import { checkNothingLeftRunning } from '../helpers/leaks.js';
import {
  appDescription,
  appIn,
  connectClient,
  MockApp,
  MockWorker,
  workerIn,
} from '../helpers/masterMocks.js';

checkNothingLeftRunning();

const FAST = { 'wick.worker.timeout': '1s' };

test('a silent worker goes DEAD, its executors LOST (app told), and it rejoins after ReconnectWorker', {
  timeout: 60_000,
}, async (t) => {
  const master = await startMaster(t, { conf: FAST });
  const client = await connectClient(t, master.url);
  const w = await MockWorker.start(t, master.url, { cores: 2, memory: 1024, heartbeatMs: 200 });
  assert.equal((await w.registerAndWait()).type, 'RegisteredWorker');
  const app = await MockApp.start(t, master.url);
  const appId = await app.register(appDescription({ memoryPerExecutorMB: 256 }));
  const added = await app.endpoint.next('ExecutorAdded');
  assert.equal(added.workerId, w.id);
  w.executorStateChanged(appId, added.id as number, 'RUNNING');
  await client.waitFor((s) => appIn(s, appId)?.executors[0]?.state === 'RUNNING');

  w.stopHeartbeats();
  const dead = await client.waitFor((s) => workerIn(s, w.id)?.state === 'DEAD');
  assert.equal(workerIn(dead, w.id)?.coresUsed, 0);
  assert.deepEqual(workerIn(dead, w.id)?.executors, []);
  const lost = await app.endpoint.next('ExecutorUpdated', (m) => m.state === 'LOST');
  assert.equal(lost.id, added.id);
  assert.equal(lost.workerLost, true);
  const removed = await app.endpoint.next('WorkerRemoved');
  assert.equal(removed.id, w.id);
  assert.equal(removed.host, '127.0.0.1');
  const a = appIn(await client.state(), appId);
  assert.deepEqual(a?.executors, []);
  assert.deepEqual(
    a?.removedExecutors.map((e) => [e.id, e.state]),
    [[added.id, 'LOST']],
  );
  // The log comes on another channel than the state, so it may come a little later.
  await master.waitForStderr(
    new RegExp(`Removing ${w.id} because we got no heartbeat in 1 seconds`),
  );

  // `wick status --json` reports it DEAD too, and counts no resources for it.
  const status = await wick(['status', '--master', master.url, '--json']);
  assert.equal(status.code, 0, status.stderr);
  const json = JSON.parse(status.stdout);
  const listed = json.workers.find((x: { id: string }) => x.id === w.id);
  assert.equal(listed.state, 'DEAD');
  assert.equal(json.aliveworkers, 0);
  assert.equal(json.cores, 0);

  // Its heartbeat resumes: the master asks it to reconnect, it registers again, it is ALIVE.
  const mark = w.endpoint.mark;
  w.startHeartbeats(200);
  const reconnect = await w.endpoint.next('ReconnectWorker', undefined, mark);
  assert.equal(reconnect.masterUrl, master.url);
  await w.endpoint.next('RegisteredWorker', undefined, mark);
  const back = await client.waitFor((s) => workerIn(s, w.id)?.state === 'ALIVE');
  assert.equal(back.workers.length, 1, 'the DEAD entry was replaced, not duplicated');
  // The app still wants cores: it gets a new executor on the worker that came back.
  const again = await app.endpoint.next('ExecutorAdded', (m) => m.id !== added.id);
  assert.equal(again.workerId, w.id);
});

test('DEAD workers are culled after wick.dead.worker.persistence timeouts', {
  timeout: 60_000,
}, async (t) => {
  const master = await startMaster(t, {
    conf: { ...FAST, 'wick.dead.worker.persistence': 1 },
  });
  const client = await connectClient(t, master.url);
  const w = await MockWorker.start(t, master.url, { heartbeatMs: 200 });
  assert.equal((await w.registerAndWait()).type, 'RegisteredWorker');
  await client.waitFor((s) => workerIn(s, w.id)?.state === 'ALIVE');
  const seen: string[] = ['ALIVE'];
  client.mirror.onChange((s) => {
    const state = workerIn(s, w.id)?.state ?? 'gone';
    if (seen.at(-1) !== state) seen.push(state);
  });
  w.stopHeartbeats();
  await client.waitFor((s) => workerIn(s, w.id)?.state === 'DEAD');
  await client.waitFor((s) => workerIn(s, w.id) === undefined);
  assert.deepEqual(seen, ['ALIVE', 'DEAD', 'gone']);
  assert.deepEqual((await client.state()).workers, []);
  // A heartbeat now comes from a worker the master no longer knows at all: ignored.
  const from = master.stderr.length;
  w.heartbeat();
  await master.waitForStderr(/This worker was never registered, so ignoring the heartbeat/, from);
  await w.barrier();
  assert.equal(w.endpoint.all('ReconnectWorker').length, 0);
});

test('a real worker stopped past the timeout goes DEAD, and re-registers by itself once resumed', {
  timeout: 60_000,
}, async (t) => {
  const master = await startMaster(t, { conf: FAST });
  const client = await connectClient(t, master.url);
  const worker = await startWorker(t, master.url, { conf: FAST });
  await client.waitFor((s) => workerIn(s, worker.workerId)?.state === 'ALIVE');
  worker.signal('SIGSTOP');
  await client.waitFor((s) => workerIn(s, worker.workerId)?.state === 'DEAD');
  const from = worker.stderr.length;
  worker.signal('SIGCONT');
  await worker.waitForStderr(/requested this worker to reconnect/, from);
  const s = await client.waitFor((s) => workerIn(s, worker.workerId)?.state === 'ALIVE');
  assert.deepEqual(
    s.workers.map((w) => [w.id, w.state]),
    [[worker.workerId, 'ALIVE']],
  );
});
