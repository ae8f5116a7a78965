/**
 * The workers' operations (backend/master/operations/workers.ts) through their API, with mock
 * peers and a real subscriber (harness.ts): what the peers are told, and what the subscriber sees.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addApplication } from '../../../backend/master/operations/apps.js';
import { relaunchDriver, submitDriver } from '../../../backend/master/operations/drivers.js';
import {
  registerWorker,
  removeWorker,
  timeOutDeadWorkers,
  workerHeartbeat,
} from '../../../backend/master/operations/workers.js';
import { schedule } from '../../../backend/master/placement.js';
import { appIn, driverIn, workerIn } from '../../helpers/masterMocks.js';
import { operations } from './harness.js';

test('registerWorker adds and announces an ALIVE worker; a second one at its address is refused', {
  timeout: 30_000,
}, async (t) => {
  const { ops, told, worker } = await operations(t);
  const w = await worker(3, 2048);
  assert.equal(await registerWorker(ops, w.info), undefined);
  const s = await told((s) => workerIn(s, w.info.id)?.state === 'ALIVE');
  assert.equal(workerIn(s, w.info.id)?.cores, 3);
  assert.equal(await registerWorker(ops, w.info), 'Duplicate worker ID');
});

test('workerHeartbeat announces the new last heartbeat', { timeout: 30_000 }, async (t) => {
  const { ops, told, worker } = await operations(t);
  const w = await worker();
  await registerWorker(ops, w.info);
  await told((s) => workerIn(s, w.info.id) !== undefined);
  const before = w.info.lastHeartbeat;
  await new Promise((r) => setTimeout(r, 5));
  workerHeartbeat(ops, w.info);
  await told((s) => (workerIn(s, w.info.id)?.lastHeartbeat ?? 0) > before);
});

test('removeWorker: its executors LOST (the driver told), its supervised driver relaunched, the other ERROR, every app told, subscribers see it all', {
  timeout: 30_000,
}, async (t) => {
  const { ops, told, worker, app, driverDesc, cluster } = await operations(t);
  const w = await worker();
  await registerWorker(ops, w.info);
  const a = await app(2);
  assert.ok(addApplication(ops, a.info));
  const supervised = await submitDriver(ops, driverDesc(true));
  const unsupervised = await submitDriver(ops, driverDesc(false));
  schedule(ops);
  await told(
    (s) =>
      appIn(s, a.info.id)?.executors.length === 2 &&
      driverIn(s, supervised.id)?.state === 'RUNNING' &&
      driverIn(s, unsupervised.id)?.state === 'RUNNING',
  );
  await removeWorker(ops, w.info, 'test: lost');
  const lost = await a.recorder.count('ExecutorUpdated', 2);
  for (const m of lost) {
    assert.equal(m.state, 'LOST');
    assert.equal(m.workerLost, true);
  }
  const removed = await a.recorder.next('WorkerRemoved');
  assert.equal(removed.id, w.info.id);
  assert.equal(removed.message, 'test: lost');
  const relaunch = cluster.latestRunOf(supervised.id);
  assert.ok(relaunch && relaunch.id !== supervised.id, 'relaunched under a new id');
  const s = await told(
    (s) =>
      workerIn(s, w.info.id)?.state === 'DEAD' &&
      appIn(s, a.info.id)?.executors.length === 0 &&
      driverIn(s, supervised.id)?.state === 'RELAUNCHING' &&
      driverIn(s, unsupervised.id)?.state === 'ERROR' &&
      driverIn(s, relaunch.id)?.state === 'SUBMITTED',
  );
  const listed = appIn(s, a.info.id);
  assert.deepEqual(
    listed?.removedExecutors.map((e) => e.state),
    ['LOST', 'LOST'],
  );
  assert.equal(driverIn(s, relaunch.id)?.relaunchedFrom, supervised.id);
  assert.deepEqual(workerIn(s, w.info.id)?.executors, []);
  assert.deepEqual(workerIn(s, w.info.id)?.driverIds, []);
});

test('timeOutDeadWorkers removes a silent worker (DEAD for the subscriber)', {
  timeout: 30_000,
}, async (t) => {
  const { ops, told, worker } = await operations(t);
  const w = await worker();
  await registerWorker(ops, w.info);
  w.info.lastHeartbeat = 0;
  await timeOutDeadWorkers(ops);
  await told((s) => workerIn(s, w.info.id)?.state === 'DEAD');
});

test('relaunchDriver: a new run waits under a new id naming the old, which ends RELAUNCHING', {
  timeout: 30_000,
}, async (t) => {
  const { ops, told, driverDesc, cluster } = await operations(t);
  const d = await submitDriver(ops, driverDesc(true));
  await relaunchDriver(ops, d);
  const fresh = cluster.latestRunOf(d.id);
  assert.ok(fresh && fresh.id !== d.id);
  assert.ok(cluster.isWaiting(fresh));
  const s = await told((s) => driverIn(s, d.id)?.state === 'RELAUNCHING');
  assert.equal(driverIn(s, fresh.id)?.relaunchedFrom, d.id);
  assert.ok(s.completedDrivers.some((x) => x.id === d.id));
});
