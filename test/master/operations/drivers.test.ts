/**
 * The drivers' operations (backend/master/operations/drivers.ts) through their API, with mock
 * peers and a real subscriber (harness.ts).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  driverStateChanged,
  killDriver,
  removeDriver,
  submitDriver,
} from '../../../backend/master/operations/drivers.js';
import { registerWorker } from '../../../backend/master/operations/workers.js';
import { schedule } from '../../../backend/master/placement.js';
import { driverIn, workerIn } from '../../helpers/masterMocks.js';
import { operations } from './harness.js';

test('submitDriver: SUBMITTED and waiting; placed on a worker, RUNNING there (LaunchDriver)', {
  timeout: 30_000,
}, async (t) => {
  const { ops, told, worker, driverDesc, cluster } = await operations(t);
  const d = await submitDriver(ops, driverDesc(false));
  assert.ok(cluster.isWaiting(d));
  await told((s) => driverIn(s, d.id)?.state === 'SUBMITTED');
  const w = await worker();
  await registerWorker(ops, w.info);
  schedule(ops);
  assert.equal((await w.recorder.next('LaunchDriver')).driverId, d.id);
  const s = await told((s) => driverIn(s, d.id)?.state === 'RUNNING');
  assert.equal(driverIn(s, d.id)?.workerId, w.info.id);
  assert.deepEqual(workerIn(s, w.info.id)?.driverIds, [d.id]);
});

test('driverStateChanged: a final state ends the driver and frees its worker', {
  timeout: 30_000,
}, async (t) => {
  const { ops, told, worker, driverDesc } = await operations(t);
  const w = await worker();
  await registerWorker(ops, w.info);
  const d = await submitDriver(ops, driverDesc(false));
  await w.recorder.next('LaunchDriver');
  await driverStateChanged(ops, d.id, 'FAILED', 'it threw');
  const s = await told((s) => s.completedDrivers.some((x) => x.id === d.id));
  assert.equal(driverIn(s, d.id)?.state, 'FAILED');
  assert.equal(driverIn(s, d.id)?.exception, 'it threw');
  assert.equal(workerIn(s, w.info.id)?.coresUsed, 0);
});

test('killDriver: a waiting driver ends KILLED at once; a running one is killed by its worker', {
  timeout: 30_000,
}, async (t) => {
  const { ops, told, worker, driverDesc } = await operations(t);
  const waiting = await submitDriver(ops, driverDesc(false));
  await killDriver(ops, waiting);
  await told((s) => driverIn(s, waiting.id)?.state === 'KILLED');
  const w = await worker();
  await registerWorker(ops, w.info);
  const running = await submitDriver(ops, driverDesc(false));
  await w.recorder.next('LaunchDriver');
  await killDriver(ops, running);
  assert.equal((await w.recorder.next('KillDriver')).driverId, running.id);
  assert.ok(running.killRequested);
  await removeDriver(ops, running.id, 'KILLED', undefined);
  await told((s) => driverIn(s, running.id)?.state === 'KILLED');
});
