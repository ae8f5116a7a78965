/**
 * Which worker holds a log, from a master's state: every way it can fail has one sentence, the
 * one the CLI prints, the agent shows and the web UI answers with 404.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { MasterState } from '../../backend/client/masterConnection.js';
import { findLogWorker, findWorker, LookupFailed } from '../../backend/client/workerLookup.js';

type W = MasterState['workers'][number];
type A = MasterState['activeApps'][number];
type E = A['executors'][number];
type D = MasterState['activeDrivers'][number];

const worker = (id: string, state: W['state'] = 'ALIVE'): W => ({
  id,
  host: '10.0.0.1',
  port: 7078,
  webUiAddress: 'http://10.0.0.1:8081',
  cores: 2,
  coresUsed: 0,
  memory: 1024,
  memoryUsed: 0,
  state,
  lastHeartbeat: 0,
  executors: [],
  driverIds: [],
});
const executor = (appId: string, id: number, workerId: string): E => ({
  appId,
  id,
  workerId,
  workerHostPort: '10.0.0.1:7078',
  cores: 1,
  memory: 256,
  state: 'RUNNING',
  history: [],
});
const app = (id: string, executors: E[], removedExecutors: E[] = []): A => ({
  id,
  name: 'pi',
  user: 'tester',
  coresGranted: 1,
  memoryPerExecutorMB: 256,
  state: 'RUNNING',
  startTime: 0,
  driver: { address: '10.0.0.2:40000', name: 'CoarseGrainedScheduler' },
  executors,
  removedExecutors,
});
const driver = (id: string, state: D['state'], workerId?: string): D => ({
  id,
  state,
  appPath: '/a.js',
  cores: 1,
  mem: 512,
  supervise: false,
  submitDate: 0,
  ...(workerId ? { workerId } : {}),
});

const appId = 'app-20261130120000-0000';
const state = {
  workers: [worker('worker-a'), worker('worker-dead', 'DEAD')],
  activeApps: [app(appId, [executor(appId, 0, 'worker-a')], [executor(appId, 1, 'worker-gone')])],
  completedApps: [],
  activeDrivers: [
    driver('driver-1', 'RUNNING', 'worker-a'),
    driver('driver-2', 'SUBMITTED'),
    driver('driver-3', 'RUNNING', 'worker-dead'),
  ],
  completedDrivers: [driver('driver-4', 'KILLED')],
};

function failsWith(f: () => unknown, message: string): void {
  assert.throws(f, (err) => {
    assert.ok(err instanceof LookupFailed, String(err));
    assert.equal(err.message, message);
    return true;
  });
}

test("an executor's or a driver's worker, removed executors included", () => {
  assert.equal(findLogWorker(state, { appId, execId: 0 }).id, 'worker-a');
  assert.equal(findLogWorker(state, { driverId: 'driver-1' }).id, 'worker-a');
});

test('an unknown application, executor or driver', () => {
  failsWith(
    () => findLogWorker(state, { appId: 'app-20261130120000-0999', execId: 0 }),
    'No application app-20261130120000-0999. The master knows no application app-20261130120000-0999: `wick status` lists what the master knows',
  );
  failsWith(
    () => findLogWorker(state, { appId, execId: 7 }),
    `No executor 7 of ${appId}. Application ${appId} has executors 0, 1`,
  );
  failsWith(
    () => findLogWorker(state, { driverId: 'driver-9' }),
    'No driver driver-9. The master knows no driver driver-9: `wick status` lists what the master knows',
  );
});

test('a driver not launched yet, or ended before it was', () => {
  failsWith(
    () => findLogWorker(state, { driverId: 'driver-2' }),
    'Driver driver-2 has not been launched on a worker (it is SUBMITTED), so it has no log yet: try again once it runs',
  );
  failsWith(
    () => findLogWorker(state, { driverId: 'driver-4' }),
    'Driver driver-4 ended KILLED before it was launched on a worker: it has no log',
  );
});

test('a worker that is gone or DEAD', () => {
  failsWith(
    () => findLogWorker(state, { appId, execId: 1 }),
    `No worker worker-gone. The master knows no worker worker-gone (it ran executor ${appId}/1): it has gone, and the logs stay in its work dir`,
  );
  failsWith(
    () => findLogWorker(state, { driverId: 'driver-3' }),
    'Worker worker-dead is DEAD (it ran driver driver-3): it does not answer the master; try again once it registers again',
  );
  failsWith(
    () => findWorker(state, 'worker-x'),
    'No worker worker-x. The master knows no worker worker-x: `wick status` lists what the master knows',
  );
});
