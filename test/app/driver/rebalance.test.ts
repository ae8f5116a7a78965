/**
 * The end of a job (DriverEndpoint.rebalance): once nothing is left to place, an executor with a
 * free core takes over tasks still queued on a busier one, which gives back those it has not
 * started (KillTask ifNotStarted). Mock executors on a real RpcEnv, as in DriverEndpoint.test.ts:
 * here one finishes whatever it is sent and the other finishes nothing until told.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { DriverEndpoint } from '../../../backend/app/driver/DriverEndpoint.js';
import { WickConf } from '../../../backend/conf/WickConf.js';
import { StatusUpdate } from '../../../backend/protocol/executor.js';
import type { TaskDescription, TaskState } from '../../../backend/protocol/task.js';
import { RpcEnv } from '../../../backend/rpc/index.js';
import { registerMockExecutor } from '../../helpers/mockExecutor.js';
import { waitFor } from '../../helpers/processes.js';

import '../../../backend/conf/all.js';
import { testProtocol } from '../../helpers/protocol.js';

/** What the mock executors report a task took: short enough to be queued ahead (prefetch). */
const TASK_MS = 10;

const envs: RpcEnv[] = [];
after(() => Promise.all(envs.map((e) => e.stop())));

type Task = TaskDescription;

/** A mock executor of one core; it reports only what the test tells it to. */
async function executor(driverUrl: string, id: string) {
  const { endpoint, driver } = await registerMockExecutor(driverUrl, id, 1, envs);
  const ended = new Set<number>();
  const report = (task: Task, state: TaskState) => {
    ended.add(task.taskId);
    driver.send(
      StatusUpdate({
        executorId: id,
        taskId: task.taskId,
        state,
        ...(state === 'FINISHED' ? { result: [task.partition], durationMs: TASK_MS } : {}),
      }),
    );
  };
  return {
    launched: () => [...endpoint.launched],
    kills: () => [...endpoint.kills],
    /** Finishes every task sent so far that has not ended. */
    finishAll() {
      for (const t of this.launched()) if (!ended.has(t.taskId)) report(t, 'FINISHED');
    },
    report,
    ended: (taskId: number) => ended.has(taskId),
  };
}

test('at the end of a job, an idle executor takes over tasks queued on a busy one that has not started them', {
  timeout: 60_000,
}, async () => {
  const conf = new WickConf().set('wick.app.name', 'rebalance');
  const env = await RpcEnv.create({ protocol: testProtocol, name: 'rebalanceDriver', conf });
  envs.push(env);
  // Time stands still: the driver's estimate of what is still queued on an executor, which goes
  // down by a task per TASK_MS since it last heard from it, stays at what it was sent.
  const driver = new DriverEndpoint(conf, '/apps/here', 3, () => 0);
  const url = env.setupEndpoint(DriverEndpoint.ENDPOINT_NAME, driver).toString();
  const fast = await executor(url, 'fast');
  const slow = await executor(url, 'slow');
  const partitions = 80;
  const done = driver.runJob({
    sources: Array.from({ length: partitions }, (_, i) => ({ kind: 'array' as const, data: [i] })),
    transformations: [],
    action: { kind: 'collect' as const },
  });
  // Each finishes its first task, so that the job's tasks prove short and get queued ahead.
  await waitFor(
    'a task on each',
    () => fast.launched().length > 0 && slow.launched().length > 0,
    20_000,
  );
  fast.finishAll();
  slow.finishAll();
  await waitFor('tasks queued on the slow one', () => slow.launched().length > 2, 20_000);
  // From here the slow one finishes nothing, and the fast one everything it gets.
  await waitFor(
    'a take-back',
    () => {
      fast.finishAll();
      return slow.kills().length > 0;
    },
    20_000,
  );
  const kills = slow.kills();
  const slowTasks = slow.launched();
  const queuedOnSlow = slowTasks.filter((t) => !slow.ended(t.taskId));
  // Its last launched, none of them started (the first task after its last end runs on its core).
  assert.deepEqual(
    kills.map((k) => k.taskId),
    queuedOnSlow.slice(-kills.length).map((t) => t.taskId),
    'the last tasks launched there are asked back',
  );
  // One task holds its core; of those queued behind it, half even the two out.
  assert.equal(kills.length, Math.floor((queuedOnSlow.length - 1) / 2));
  assert.ok(kills.length >= 2, `${kills.length} asked back`);
  assert.ok(
    kills.every((k) => k.ifNotStarted === true),
    'started tasks are left to finish',
  );
  // It had started one of them after all: it finishes there; the others come back KILLED.
  const [startedAnyway, ...givenBack] = kills.map(
    (k) => slowTasks.find((t) => t.taskId === k.taskId) as Task,
  );
  assert.ok(startedAnyway);
  slow.report(startedAnyway, 'FINISHED');
  const fastBefore = fast.launched().length;
  for (const t of givenBack) slow.report(t, 'KILLED');
  {
    await waitFor(
      'the tasks given back to go to the fast one',
      () => {
        const again = fast.launched().slice(fastBefore);
        return givenBack.every((t) => again.some((a) => a.partition === t.partition));
      },
      20_000,
    );
    const again = fast.launched().slice(fastBefore);
    assert.ok(
      again.every((a) => a.attempt === 0),
      'a task given back is not a failure: its attempt number stays',
    );
    assert.ok(
      !again.some((a) => a.partition === startedAnyway.partition),
      'the one that finished is not run again',
    );
  }
  // Both finish what is left; every partition comes back once, in order.
  await waitFor(
    'the job to end',
    () => {
      fast.finishAll();
      slow.finishAll();
      return driver.scheduler.runningCount === 0 && !driver.scheduler.hasPending;
    },
    20_000,
  );
  const results = (await done) as number[][];
  assert.deepEqual(
    results.flat(),
    Array.from({ length: partitions }, (_, i) => i),
  );
});
