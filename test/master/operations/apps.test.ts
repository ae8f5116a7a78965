/**
 * The applications' operations (backend/master/operations/apps.ts) through their API, with mock
 * peers and a real subscriber (harness.ts).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  addApplication,
  driverDisconnected,
  executorStateChanged,
  newAppId,
  removeApplication,
} from '../../../backend/master/operations/apps.js';
import { registerWorker } from '../../../backend/master/operations/workers.js';
import { schedule } from '../../../backend/master/placement.js';
import { appIn, workerIn } from '../../helpers/masterMocks.js';
import { operations } from './harness.js';

test('addApplication announces a WAITING app; scheduling makes it RUNNING with executors', {
  timeout: 30_000,
}, async (t) => {
  const { ops, told, worker, app } = await operations(t);
  const a = await app(2);
  assert.ok(addApplication(ops, a.info));
  await told((s) => appIn(s, a.info.id)?.state === 'WAITING');
  const w = await worker();
  await registerWorker(ops, w.info);
  schedule(ops);
  await w.recorder.count('LaunchExecutor', 2);
  await a.recorder.count('ExecutorAdded', 2);
  const s = await told((s) => appIn(s, a.info.id)?.state === 'RUNNING');
  assert.equal(appIn(s, a.info.id)?.executors.length, 2);
  assert.equal(workerIn(s, w.info.id)?.coresUsed, 2);
});

test('removeApplication: its executors killed on their worker, the driver and every worker told, KILLED for the subscriber', {
  timeout: 30_000,
}, async (t) => {
  const { ops, told, worker, app } = await operations(t);
  const w = await worker();
  await registerWorker(ops, w.info);
  const a = await app(2);
  addApplication(ops, a.info);
  schedule(ops);
  await told((s) => appIn(s, a.info.id)?.executors.length === 2);
  await removeApplication(ops, a.info, 'KILLED');
  const kills = await w.recorder.count('KillExecutor', 2);
  assert.deepEqual(
    kills.map((k) => k.appId),
    [a.info.id, a.info.id],
  );
  assert.equal((await a.recorder.next('ApplicationRemoved')).message, 'KILLED');
  assert.equal((await w.recorder.next('ApplicationFinished')).id, a.info.id);
  const s = await told((s) =>
    s.completedApps.some((x) => x.id === a.info.id && x.state === 'KILLED'),
  );
  const done = s.completedApps.find((x) => x.id === a.info.id);
  assert.deepEqual(
    done?.removedExecutors.map((e) => e.state),
    ['KILLED', 'KILLED'],
  );
  assert.equal(workerIn(s, w.info.id)?.coresUsed, 0);
});

test('driverDisconnected: the application FAILED, saying why', { timeout: 30_000 }, async (t) => {
  const { ops, told, app } = await operations(t);
  const a = await app();
  addApplication(ops, a.info);
  await driverDisconnected(ops, a.info);
  const s = await told((s) => s.completedApps.some((x) => x.id === a.info.id));
  const done = s.completedApps.find((x) => x.id === a.info.id);
  assert.equal(done?.state, 'FAILED');
  assert.match(done?.failure?.message ?? '', /went away without unregistering/);
});

test('executorStateChanged: the driver told, the executor ended and its cores freed; failures in a row past wick.deploy.maxExecutorRetries fail the app', {
  timeout: 30_000,
}, async (t) => {
  const { ops, told, worker, app } = await operations(t, { 'wick.deploy.maxExecutorRetries': '2' });
  const w = await worker(1);
  await registerWorker(ops, w.info);
  const a = await app(1);
  addApplication(ops, a.info);
  schedule(ops);
  for (let i = 0; i < 2; i++) {
    const launch = await w.recorder.next('LaunchExecutor', (m) => m.execId === i);
    const exec = a.info.executors.get(launch.execId as number);
    assert.ok(exec);
    await executorStateChanged(ops, a.info, exec, {
      type: 'ExecutorStateChanged',
      appId: a.info.id,
      execId: exec.id,
      state: 'EXITED',
      exitStatus: 1,
      message: 'boom',
    });
    const updated = await a.recorder.next('ExecutorUpdated', (m) => m.id === exec.id);
    assert.equal(updated.state, 'EXITED');
  }
  const s = await told((s) => s.completedApps.some((x) => x.id === a.info.id));
  const done = s.completedApps.find((x) => x.id === a.info.id);
  assert.equal(done?.state, 'FAILED');
  assert.match(done?.failure?.message ?? '', /2 executor failures in a row/);
  assert.equal(done?.lastExecutorFailure?.message, 'boom');
  assert.equal(workerIn(s, w.info.id)?.coresUsed, 0);
});

test('newAppId: an id another master claimed is passed over for the next number; a claim that fails gives the id unclaimed', {
  timeout: 30_000,
}, async (t) => {
  const { ops } = await operations(t);
  const now = Date.UTC(2026, 0, 2, 3, 4, 5);
  const asked: string[] = [];
  const taken = new Set(['app-20260102030405-0000', 'app-20260102030405-0001']);
  const claiming = {
    ...ops,
    claimAppId: async (id: string) => {
      asked.push(id);
      return !taken.has(id);
    },
  };
  assert.equal(await newAppId(claiming, now), 'app-20260102030405-0002');
  assert.deepEqual(asked, [...taken, 'app-20260102030405-0002']);
  assert.equal(await newAppId(claiming, now), 'app-20260102030405-0003', 'the counter goes on');
  const failing = {
    ...ops,
    claimAppId: async () => {
      throw new Error('EACCES');
    },
  };
  assert.equal(await newAppId(failing, now), 'app-20260102030405-0004');
  assert.equal(await newAppId(ops, now), 'app-20260102030405-0005', 'no claims: the counter alone');
});
