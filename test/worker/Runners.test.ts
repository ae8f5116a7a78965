/** Runners: the running executors and drivers, and the finished ones retained for the page. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { DriverRunner } from '../../backend/worker/DriverRunner.js';
import type { ExecutorRunner } from '../../backend/worker/ExecutorRunner.js';
import { Runners } from '../../backend/worker/Runners.js';

// Runners keys them by id and asks nothing else of them but kill().
function executor(appId: string, execId: number, killed: string[] = []): ExecutorRunner {
  const fullId = `${appId}/${execId}`;
  return {
    appId,
    execId,
    fullId,
    kill: async () => {
      killed.push(fullId);
    },
  } as unknown as ExecutorRunner;
}

function driver(driverId: string, killed: string[] = []): DriverRunner {
  return {
    driverId,
    kill: async () => {
      killed.push(driverId);
    },
  } as unknown as DriverRunner;
}

test('an executor is running until it finishes, then retained; the oldest retained go first', () => {
  const runners = new Runners({ executors: 2, drivers: 2 });
  const [a, b, c] = [executor('app-1', 0), executor('app-1', 1), executor('app-2', 0)];
  for (const r of [a, b, c]) runners.addExecutor(r);
  assert.equal(runners.executor('app-1/1'), b);
  assert.equal(runners.hasExecutorsOf('app-1'), true);
  assert.equal(runners.executorFinished(a), true);
  assert.equal(runners.executorFinished(a), false, 'a second report releases nothing');
  assert.equal(runners.executorFinished(b), true);
  assert.equal(runners.hasExecutorsOf('app-1'), false);
  assert.equal(runners.executorFinished(c), true);
  assert.deepEqual(runners.runningExecutors(), []);
  assert.deepEqual(runners.retainedExecutors(), [b, c], 'the oldest, a, dropped');
});

test('a second executor with the same id is refused while the first runs', () => {
  const runners = new Runners({ executors: 10, drivers: 10 });
  runners.addExecutor(executor('app-1', 0));
  assert.throws(
    () => runners.addExecutor(executor('app-1', 0)),
    /Executor app-1\/0 is already running here/,
  );
});

test('drivers: running, finished and retained, looked up by id', () => {
  const runners = new Runners({ executors: 10, drivers: 1 });
  const [d1, d2] = [driver('driver-1'), driver('driver-2')];
  runners.addDriver(d1);
  runners.addDriver(d2);
  assert.deepEqual(runners.runningDriverIds(), ['driver-1', 'driver-2']);
  assert.throws(() => runners.addDriver(driver('driver-1')), /Driver driver-1 is already running/);
  assert.equal(runners.driverFinished(d1), true);
  assert.equal(runners.driver('driver-1'), undefined);
  assert.equal(runners.finishedDriver('driver-1'), d1);
  assert.equal(runners.driverFinished(d2), true);
  assert.equal(runners.finishedDriver('driver-1'), undefined, 'only one retained');
  assert.deepEqual(runners.retainedDrivers(), [d2]);
});

test('killAll kills every running executor and driver, not the finished ones', async () => {
  const killed: string[] = [];
  const runners = new Runners({ executors: 10, drivers: 10 });
  const done = executor('app-1', 0, killed);
  runners.addExecutor(done);
  runners.addExecutor(executor('app-1', 1, killed));
  runners.addDriver(driver('driver-1', killed));
  runners.executorFinished(done);
  await runners.killAll();
  assert.deepEqual(killed.sort(), ['app-1/1', 'driver-1']);
});
