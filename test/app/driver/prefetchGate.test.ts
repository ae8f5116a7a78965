/**
 * Queueing short tasks ahead on busy executors (DriverEndpoint's prefetch) waits while an
 * executor the master granted is still starting: a short job must not be queued whole on the
 * first executor to register. Mock executors on a real RpcEnv, as in DriverEndpoint.test.ts.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { DriverEndpoint } from '../../../backend/app/driver/DriverEndpoint.js';
import { WickConf } from '../../../backend/conf/WickConf.js';
import { StatusUpdate } from '../../../backend/protocol/executor.js';
import { RpcEnv } from '../../../backend/rpc/index.js';
import { registerMockExecutor } from '../../helpers/mockExecutor.js';
import { waitFor } from '../../helpers/processes.js';

import '../../../backend/conf/all.js';
import { testProtocol } from '../../helpers/protocol.js';

const envs: RpcEnv[] = [];
after(() => Promise.all(envs.map((e) => e.stop())));

/** A mock executor of one core that finishes, when told, every task it has been sent. */
async function executor(driverUrl: string, id: string) {
  const { endpoint, driver } = await registerMockExecutor(driverUrl, id, 1, envs);
  let finished = 0;
  return {
    get finished() {
      return finished;
    },
    launched: () => [...endpoint.launched],
    finishAll() {
      const tasks = this.launched();
      for (; finished < tasks.length; finished++) {
        const taskId = tasks[finished]?.taskId as number;
        driver.send(
          StatusUpdate({
            executorId: id,
            taskId,
            state: 'FINISHED',
            result: [taskId],
            durationMs: 1,
          }),
        );
      }
    },
  };
}

async function startDriver(name: string) {
  const conf = new WickConf().set('wick.app.name', name);
  const env = await RpcEnv.create({ protocol: testProtocol, name, conf });
  envs.push(env);
  const driver = new DriverEndpoint(conf, '/apps/here', 3);
  const url = env.setupEndpoint(DriverEndpoint.ENDPOINT_NAME, driver).toString();
  return { driver, url };
}

function job(driver: DriverEndpoint, partitions: number) {
  return driver.runJob({
    sources: Array.from({ length: partitions }, (_, i) => ({ kind: 'array' as const, data: [i] })),
    transformations: [],
    action: { kind: 'collect' as const },
  });
}

/**
 * Finishes whatever the executors are sent until the job ends; returns the most tasks ever seen
 * queued ahead on executor 0.
 */
async function finishEverything(
  driver: DriverEndpoint,
  done: Promise<unknown>,
  executors: { finishAll(): void }[],
): Promise<number> {
  let settled = false;
  void done.finally(() => {
    settled = true;
  });
  let queuedSeen = 0;
  while (!settled) {
    queuedSeen = Math.max(queuedSeen, driver.executors.get('0')?.queued ?? 0);
    for (const e of executors) e.finishAll();
    await new Promise((r) => setTimeout(r, 1));
  }
  return queuedSeen;
}

test('no task is queued ahead while a granted executor is still starting; then both get work', {
  timeout: 60_000,
}, async () => {
  const { driver, url } = await startDriver('gateDriver1');
  driver.executorGranted('0');
  driver.executorGranted('1');
  const a = await executor(url, '0');
  const done = job(driver, 400);
  // Executor 1 is still starting: executor 0 gets one task per free core, however short they are.
  for (let n = 1; n <= 5; n++) {
    await waitFor(`task ${n} on executor 0`, () => a.launched().length >= n);
    assert.equal(a.launched().length, n, `one task at a time, ${n} so far`);
    assert.equal(driver.executors.get('0')?.queued, 0, `nothing queued after ${n} task(s)`);
    a.finishAll();
  }
  // Executor 1 registers: short tasks are queued ahead again, and it gets its share.
  const b = await executor(url, '1');
  const queuedSeen = await finishEverything(driver, done, [a, b]);
  assert.equal((await done).length, 400);
  assert.ok(queuedSeen > 0, 'tasks were queued ahead once every granted executor registered');
  assert.ok(b.finished > 0, 'the executor that started late ran tasks too');
});

test('an executor granted and then removed before it registered no longer holds the queue back', {
  timeout: 60_000,
}, async () => {
  const { driver, url } = await startDriver('gateDriver2');
  driver.executorGranted('0');
  driver.executorGranted('1');
  const a = await executor(url, '0');
  const done = job(driver, 400);
  await waitFor('a first task', () => a.launched().length === 1);
  a.finishAll();
  await waitFor('a second task', () => a.launched().length === 2);
  assert.equal(driver.executors.get('0')?.queued, 0);
  driver.removeExecutor('1', 'Command exited with code 1');
  const queuedSeen = await finishEverything(driver, done, [a]);
  assert.equal((await done).length, 400);
  assert.ok(queuedSeen > 0, 'tasks were queued ahead once the granted executor was gone');
});
