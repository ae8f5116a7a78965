/**
 * decommissionWorker (backend/master/operations/decommission.ts) through its API, with mock
 * peers and a real subscriber (harness.ts): the worker DECOMMISSIONED for the subscriber, its
 * executors' drivers told, the worker told when an operator asked; placement passes it over; and
 * once it leaves it stays DECOMMISSIONED, is not removed a second time by the time-out, and is
 * forgotten as a DEAD one would be.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addApplication } from '../../../backend/master/operations/apps.js';
import {
  decommissionWorker,
  workersNamed,
} from '../../../backend/master/operations/decommission.js';
import {
  registerWorker,
  removeWorker,
  timeOutDeadWorkers,
} from '../../../backend/master/operations/workers.js';
import { schedule } from '../../../backend/master/placement.js';
import { appIn, workerIn } from '../../helpers/masterMocks.js';
import { operations } from './harness.js';

test('decommissionWorker: DECOMMISSIONED, its drivers and the worker told; nothing placed there; kept DECOMMISSIONED once gone', {
  timeout: 30_000,
}, async (t) => {
  const { ops, told, worker, app, cluster } = await operations(t, {
    'wick.dead.worker.persistence': '1',
  });
  const w = await worker(2, 2048);
  const other = await worker(2, 2048);
  await registerWorker(ops, w.info);
  const a = await app(1);
  assert.ok(addApplication(ops, a.info));
  schedule(ops);
  await told((s) => appIn(s, a.info.id)?.executors.length === 1);
  const [exec] = [...w.info.executors.values()];
  assert.ok(exec);

  assert.equal(decommissionWorker(ops, w.info, 'asked by an operator', true), true);
  assert.equal(decommissionWorker(ops, w.info, 'again', true), false, 'once');
  const told1 = await a.recorder.next('ExecutorDecommissioned');
  assert.equal(told1.id, exec.id);
  assert.equal(told1.workerHost, w.info.host);
  assert.match(told1.message as string, /asked by an operator/);
  await w.recorder.next('DecommissionWorker');
  await told((s) => workerIn(s, w.info.id)?.state === 'DECOMMISSIONED');

  // w has a free core, but a new application waits rather than go there, until a worker with
  // room registers: its executor goes there.
  const b = await app(1);
  assert.ok(addApplication(ops, b.info));
  schedule(ops);
  await registerWorker(ops, other.info);
  schedule(ops);
  const s = await told((s) => appIn(s, b.info.id)?.executors.length === 1);
  assert.equal(appIn(s, b.info.id)?.executors[0]?.workerId, other.info.id);
  assert.equal(w.info.coresFree, 1);
  assert.equal(w.info.executors.size, 1, 'nothing more on the decommissioned worker');

  // It leaves: still DECOMMISSIONED, no longer registered; the time-out does not remove it again.
  await removeWorker(ops, w.info, 'disassociated');
  assert.equal(cluster.workerById(w.info.id), undefined);
  assert.equal(w.info.state, 'DECOMMISSIONED');
  const removedBefore = a.recorder.all('WorkerRemoved').length;
  w.info.lastHeartbeat = Date.now() - 70_000;
  await timeOutDeadWorkers(ops);
  assert.equal(a.recorder.all('WorkerRemoved').length, removedBefore, 'not removed twice');
  assert.ok(cluster.knowsWorker(w.info.id), 'still listed');
  // Past wick.dead.worker.persistence time-outs it is forgotten, as a DEAD one.
  w.info.lastHeartbeat = Date.now() - 200_000;
  await timeOutDeadWorkers(ops);
  assert.equal(cluster.knowsWorker(w.info.id), false);
});

test('workersNamed: every worker on a host, each named by id, and the names that matched none', () => {
  const w = (id: string, host: string) => ({ id, host }) as never;
  const all = [w('worker-1', 'h1'), w('worker-2', 'h1'), w('worker-3', 'h2')];
  const r = workersNamed(all, ['h1', 'h9'], ['worker-3', 'worker-9']);
  assert.deepEqual(
    r.workers.map((x: { id: string }) => x.id),
    ['worker-1', 'worker-2', 'worker-3'],
  );
  assert.deepEqual(r.unmatched, ['h9', 'worker-9']);
});
