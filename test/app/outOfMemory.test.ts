/**
 * Tasks that run out of memory, on a real master and 2 workers × 1 core, with executors of 64 MiB
 * (wick.executor.memory) and wick.task.maxFailures 2. A task that fills its thread's heap bit by
 * bit ends its thread, not its executor; one allocation too large for it ends the executor process
 * (V8's fatal "JavaScript heap out of memory"). Either way the task fails with a reason that names
 * it, the heap and the setting, and the job aborts after maxFailures attempts, in seconds (it used
 * to crash executor after executor, with no job failure after 240 s).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { DriverEndpoint } from '../../backend/app/driver/DriverEndpoint.js';
import { JobFailedError } from '../../backend/app/driver/scheduler/TaskScheduler.js';
import { WickContext } from '../../backend/app/index.js';
import { eventually, type SharedCluster, startSharedCluster } from '../helpers/apps.js';

for (const k of ['WICK_MASTER', 'WICK_SUBMIT_CONF', 'WICK_APP_NAME', 'WICK_APP_DIR'])
  delete process.env[k];

const MAX_FAILURES = 2;

let cluster: SharedCluster;
let wc: WickContext;
const driver = () => (wc as unknown as { driver: DriverEndpoint }).driver;

/** The ids of the registered executors, once there are two. */
const twoExecutors = (signal: AbortSignal) =>
  eventually(signal, () => {
    const ids = [...driver().executors.keys()];
    return ids.length === 2 ? ids.sort() : undefined;
  });

before(async () => {
  cluster = await startSharedCluster();
  wc = await WickContext.create({
    master: cluster.url,
    appName: 'out of memory',
    conf: { 'wick.task.maxFailures': String(MAX_FAILURES), 'wick.executor.memory': '64m' },
  });
  await twoExecutors(AbortSignal.timeout(60_000));
});

after(async () => {
  await wc?.stop();
  await cluster?.stop();
});

/** The job's failure, checked to be the out-of-memory one of its only task, after MAX_FAILURES. */
function outOfMemoryFailure(err: unknown): true {
  assert.ok(err instanceof JobFailedError, String(err));
  assert.match(
    err.message,
    new RegExp(
      `^Job aborted due to stage failure: Task 0 in stage (\\d+)\\.0 failed ${MAX_FAILURES} times, most recent failure: Lost task 0\\.\\d in stage \\1\\.0 \\(TID (\\d+), executor \\d+\\): OutOfMemoryError: Task \\2 \\(partition 0 of stage \\1\\) ran out of memory: executor heap 64m; set wick\\.executor\\.memory higher$`,
    ),
  );
  return true;
}

test('a task that fills its thread’s heap fails as out of memory; after maxFailures its job aborts, and the executors live on', {
  timeout: 120_000,
}, async (t) => {
  const before = await twoExecutors(t.signal);
  const started = performance.now();
  await assert.rejects(
    wc
      .parallelize([1], 1)
      .map(() => {
        // Many small arrays: the shape Node ends a thread for at its heap limit; one array grown
        // forever can abort the process instead (nodejs/node#47224), which the next test covers.
        const hoard: number[][] = [];
        for (;;) hoard.push(new Array(10_000).fill(hoard.length));
      })
      .collect(),
    outOfMemoryFailure,
  );
  t.diagnostic(`the job failed in ${(performance.now() - started).toFixed(0)} ms`);
  assert.deepEqual([...driver().executors.keys()].sort(), before, 'no executor was lost');
  assert.match(
    cluster.executorOutput(wc.appId, 'stderr'),
    /ERROR Executor: Lost task 0\.0 in stage \d+\.0 \(TID \d+\): Task \d+ \(partition 0 of stage \d+\) ran out of memory/,
  );
  // They still run jobs.
  assert.deepEqual(await wc.parallelize([1, 2], 2).collect(), [1, 2]);
});

test('a task whose allocation ends its executor process: the driver fails it as out of memory; after maxFailures its job aborts', {
  timeout: 120_000,
}, async (t) => {
  const before = await twoExecutors(t.signal);
  const started = performance.now();
  await assert.rejects(
    wc
      .parallelize([1], 1)
      .map(() => new Array(2e8).fill(1.5).length)
      .collect(),
    outOfMemoryFailure,
  );
  t.diagnostic(`the job failed in ${(performance.now() - started).toFixed(0)} ms`);
  const s = await cluster.watch.waitFor((s) => {
    const app = cluster.watch.app(s, wc.appId);
    return (app?.removedExecutors.length ?? 0) >= 1;
  });
  const lost = cluster.watch.app(s, wc.appId)?.removedExecutors ?? [];
  const died = lost.filter((e) => before.includes(String(e.id)));
  assert.ok(died.length >= 1, 'an executor the job ran on died');
  assert.equal(
    died[0]?.message,
    'Command exited with signal SIGABRT: JavaScript heap out of memory',
  );
  const app = cluster.watch.app(await cluster.watch.waitFor(() => true), wc.appId);
  assert.match(app?.lastExecutorFailure?.message ?? '', /JavaScript heap out of memory/);
  assert.equal(app?.state, 'RUNNING', 'the application goes on');
  // The master replaces the executors; the next job runs.
  await twoExecutors(t.signal);
  assert.deepEqual(await wc.parallelize([1, 2], 2).collect(), [1, 2]);
});
