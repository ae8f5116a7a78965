/**
 * The TaskScheduler is pure bookkeeping (no I/O, no timers), so every placement, retry and abort
 * is driven here by hand: offers in, task descriptions out, status reports in, jobs settled.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  JobFailedError,
  type JobSpec,
  type Offer,
  TaskScheduler,
} from '../../../../backend/app/driver/scheduler/TaskScheduler.js';
import type { TaskError } from '../../../../backend/protocol/task.js';

function job(partitions: number): JobSpec {
  return {
    sources: Array.from({ length: partitions }, (_, i) => ({ kind: 'array' as const, data: [i] })),
    transformations: [],
    action: { kind: 'collect' },
  };
}

function offers(spec: Record<string, number>): Offer[] {
  return Object.entries(spec).map(([executorId, freeCores]) => ({ executorId, freeCores }));
}

/** [executorId, partition, attempt] of each placed task: what a test usually wants to compare. */
function placements(placed: ReturnType<TaskScheduler['resourceOffers']>) {
  return placed.map((p) => [p.executorId, p.task.partition, p.task.attempt]);
}

function boom(message = 'boom'): TaskError {
  const e = new Error(message);
  return { name: e.name, message: e.message, stack: e.stack };
}

/** Whether a promise has settled yet (after the microtasks queued so far have run). */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  p.then(
    () => {
      done = true;
    },
    () => {
      done = true;
    },
  );
  await new Promise((r) => setImmediate(r));
  return done;
}

test('fills the offered cores with tasks in partition order; results come back in partition order', async () => {
  const s = new TaskScheduler(4);
  const { done } = s.submit(job(5));
  const first = s.resourceOffers(offers({ a: 2, b: 1 }));
  assert.equal(first.length, 3);
  assert.deepEqual(
    first.map((p) => p.task.partition),
    [0, 1, 2],
  );
  assert.deepEqual(
    first.map((p) => p.executorId).sort(),
    ['a', 'a', 'b'],
    'no executor gets more tasks than its free cores',
  );
  assert.equal(s.runningCount, 3);
  assert.ok(s.hasPending);
  assert.deepEqual(s.resourceOffers(offers({ a: 0, b: 0 })), [], 'no free core, no task');
  // Finish out of order; the last two wait for the next offer.
  for (const p of [...first].reverse()) s.taskFinished(p.task.taskId, `r${p.task.partition}`);
  const rest = s.resourceOffers(offers({ b: 5 }));
  assert.deepEqual(placements(rest), [
    ['b', 3, 0],
    ['b', 4, 0],
  ]);
  assert.equal(s.hasPending, false);
  assert.equal(await settled(done), false);
  s.taskFinished(rest[1]?.task.taskId as number, 'r4');
  s.taskFinished(rest[0]?.task.taskId as number, 'r3');
  assert.deepEqual(await done, ['r0', 'r1', 'r2', 'r3', 'r4']);
  assert.equal(s.runningCount, 0);
});

test('tasks go round robin over the offers, as Spark spreads them, not to the first that has room', () => {
  const s = new TaskScheduler(4);
  s.submit(job(98));
  // A prefetch's queue slots: hundreds per executor.
  const placed = s.resourceOffers(offers({ a: 192, b: 192 }));
  const count = (id: string) => placed.filter((p) => p.executorId === id).length;
  assert.deepEqual([count('a'), count('b')], [49, 49]);
  assert.deepEqual(
    placed.slice(0, 4).map((p) => [p.executorId, p.task.partition]),
    [
      ['a', 0],
      ['b', 1],
      ['a', 2],
      ['b', 3],
    ],
  );
  // An offer that runs out drops out of the turns; the others go on.
  s.submit(job(6));
  const more = s.resourceOffers(offers({ a: 1, b: 5, c: 2 }));
  assert.deepEqual(
    more.map((p) => p.executorId),
    ['a', 'b', 'c', 'b', 'c', 'b'],
  );
});

test('every task description carries the job, its stage, the partition source and the action', () => {
  const s = new TaskScheduler(4);
  const spec = job(2);
  spec.transformations = [{ kind: 'map', fn: { source: '(x) => x + 1' } }];
  const { jobId } = s.submit(spec);
  const [p0, p1] = s.resourceOffers(offers({ a: 2 }));
  assert.ok(p0 && p1);
  assert.notEqual(p0.task.taskId, p1.task.taskId, 'task ids are unique');
  assert.deepEqual(
    { ...p1.task, taskId: 0 },
    {
      taskId: 0,
      jobId,
      stageId: jobId,
      partition: 1,
      attempt: 0,
      source: { kind: 'array', data: [1] },
      transformations: spec.transformations,
      action: { kind: 'collect' },
    },
  );
  assert.equal(s.jobOf(p1.task.taskId), jobId);
});

test('an empty job settles at once with no results and asks for no core', async () => {
  const s = new TaskScheduler(4);
  const { done } = s.submit(job(0));
  assert.deepEqual(await done, []);
  assert.equal(s.hasPending, false);
  assert.deepEqual(s.resourceOffers(offers({ a: 4 })), []);
});

test('a failed task is retried on another executor when one has a free core', async () => {
  const s = new TaskScheduler(4);
  const { done } = s.submit(job(1));
  const [t0] = s.resourceOffers(offers({ a: 1, b: 1 }));
  assert.deepEqual(placements(t0 ? [t0] : []), [['a', 0, 0]]);
  s.taskFailed(t0?.task.taskId as number, boom());
  // a is offered first and has a free core, but the task just failed there.
  const [t1] = s.resourceOffers(offers({ a: 1, b: 1 }));
  assert.deepEqual(placements(t1 ? [t1] : []), [['b', 0, 1]]);
  s.taskFailed(t1?.task.taskId as number, boom());
  // It failed on both: either will do; the attempt number keeps counting.
  const [t2] = s.resourceOffers(offers({ b: 1 }));
  assert.deepEqual(placements(t2 ? [t2] : []), [['b', 0, 2]]);
  s.taskFinished(t2?.task.taskId as number, 'ok');
  assert.deepEqual(await done, ['ok']);
});

test('when only the executor it failed on has a core, the retry runs there rather than waiting', () => {
  const s = new TaskScheduler(4);
  s.submit(job(1));
  const [t0] = s.resourceOffers(offers({ a: 1 }));
  s.taskFailed(t0?.task.taskId as number, boom());
  assert.deepEqual(placements(s.resourceOffers(offers({ a: 1, b: 0 }))), [['a', 0, 1]]);
});

test('a failed task goes before the job’s tasks that never ran', () => {
  const s = new TaskScheduler(4);
  s.submit(job(3));
  const [t0] = s.resourceOffers(offers({ a: 1 }));
  s.taskFailed(t0?.task.taskId as number, boom());
  assert.deepEqual(placements(s.resourceOffers(offers({ b: 2 }))), [
    ['b', 0, 1],
    ['b', 1, 0],
  ]);
});

test('after wick.task.maxFailures failures the job fails with Spark’s message and the executor’s stack', async () => {
  const s = new TaskScheduler(4);
  const { jobId, done } = s.submit(job(3));
  // Partition 1 keeps failing; 0 and 2 run on c meanwhile and stay running.
  const all = s.resourceOffers(offers({ a: 1, b: 1, c: 1 }));
  const others = all.filter((p) => p.task.partition !== 1);
  let current = all.find((p) => p.task.partition === 1);
  const executors: string[] = [];
  for (let attempt = 0; attempt < 4; attempt++) {
    assert.ok(current, `attempt ${attempt} was placed`);
    assert.equal(current.task.attempt, attempt);
    executors.push(current.executorId);
    const error = boom(`bad record ${attempt}`);
    s.taskFailed(current.task.taskId, error);
    if (attempt < 3) {
      assert.equal(await settled(done), false, `the job still runs after ${attempt + 1} failures`);
      current = s.resourceOffers(offers({ a: 1, b: 1 }))[0];
    }
  }
  const err = await done.then(
    () => assert.fail('the job should have failed'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof JobFailedError);
  // Named as the task saw itself (Debug Failed Task stops in that partition).
  assert.deepEqual(err.failedTask, { stageId: jobId, partitionId: 1 });
  const last = current as NonNullable<typeof current>;
  const head = `Job aborted due to stage failure: Task 1 in stage ${jobId}.0 failed 4 times, most recent failure: Lost task 1.3 in stage ${jobId}.0 (TID ${last.task.taskId}, executor ${last.executorId}): `;
  assert.ok(err.message.startsWith(head), err.message);
  // The user's error, then the executor's stack trace.
  assert.match(err.message.slice(head.length), /^Error: bad record 3\n\s+at /);
  // The first retry left the executor that failed it.
  assert.deepEqual(executors.slice(0, 2), ['b', 'a']);
  assert.equal(s.hasPending, false, 'nothing of the failed job is retried');
  // Its tasks that still run are no longer tracked; their late reports change nothing.
  for (const p of others) assert.equal(s.taskFinished(p.task.taskId, 'late'), undefined);
  assert.equal(s.runningCount, 0);
});

test('the failures that count are per partition: several partitions failing less often still succeed', async () => {
  const s = new TaskScheduler(3);
  const { done } = s.submit(job(2));
  for (let round = 0; round < 2; round++) {
    for (const p of s.resourceOffers(offers({ a: 2 }))) s.taskFailed(p.task.taskId, boom());
  }
  const last = s.resourceOffers(offers({ a: 2 }));
  assert.deepEqual(
    last.map((p) => p.task.attempt),
    [2, 2],
  );
  for (const p of last) s.taskFinished(p.task.taskId, p.task.partition);
  assert.deepEqual(await done, [0, 1]);
});

test('a lost executor’s tasks run again elsewhere without counting as failures', async () => {
  const s = new TaskScheduler(2);
  const { done } = s.submit(job(2));
  const first = s.resourceOffers(offers({ a: 1, b: 1 }));
  assert.deepEqual(placements(first), [
    ['a', 0, 0],
    ['b', 1, 0],
  ]);
  // Losing executors more often than maxFailures does not fail the job.
  assert.equal(s.executorLost('a').length, 1);
  assert.equal(s.executorLost('a').length, 0, 'a second report of the same loss requeues nothing');
  let again = s.resourceOffers(offers({ c: 1 }));
  assert.deepEqual(placements(again), [['c', 0, 0]]);
  assert.equal(s.executorLost('c').length, 1);
  again = s.resourceOffers(offers({ d: 1 }));
  assert.deepEqual(placements(again), [['d', 0, 0]], 'still attempt 0');
  assert.equal(s.executorLost('d').length, 1);
  again = s.resourceOffers(offers({ e: 1 }));
  // A result from the executor that was lost arrives late: it is ignored.
  assert.equal(s.taskFinished(first[0]?.task.taskId as number, 'stale'), undefined);
  s.taskFinished(again[0]?.task.taskId as number, 'fresh0');
  s.taskFinished(first[1]?.task.taskId as number, 'fresh1');
  assert.deepEqual(await done, ['fresh0', 'fresh1']);
});

test('a task taken back before it started runs again first, without counting as a failure', async () => {
  const s = new TaskScheduler(2);
  const { done } = s.submit(job(4));
  const placed = s.resourceOffers(offers({ a: 3, b: 1 }));
  assert.deepEqual(placements(placed), [
    ['a', 0, 0],
    ['b', 1, 0],
    ['a', 2, 0],
    ['a', 3, 0],
  ]);
  assert.equal(s.hasPending, false);
  let taskId = placed[2]?.task.taskId as number;
  const third = taskId;
  // Taken back more often than maxFailures allows failures: the job goes on.
  for (let i = 0; i < 3; i++) {
    assert.deepEqual(s.taskTakenBack(taskId), { executorId: 'a' });
    // Two cores offered, one task placed: only its partition waits to be placed again.
    const retry = s.resourceOffers(offers({ a: 2 }));
    assert.deepEqual(placements(retry), [['a', 2, 0]], 'the same partition, still attempt 0');
    taskId = retry[0]?.task.taskId as number;
  }
  assert.deepEqual(s.taskTakenBack(taskId), { executorId: 'a' });
  const again = s.resourceOffers(offers({ b: 2 }));
  assert.deepEqual(placements(again), [['b', 2, 0]], 'the same partition, still attempt 0');
  assert.equal(
    s.taskTakenBack(third),
    undefined,
    'a second answer for the same task changes nothing',
  );
  for (const p of [...placed.filter((p) => p.task.partition !== 2), ...again])
    s.taskFinished(p.task.taskId, p.task.partition);
  assert.deepEqual(await done, [0, 1, 2, 3]);
  assert.equal(s.hasPending, false, 'a finished job has nothing pending');
});

test('jobs are served first in, first out', async () => {
  const s = new TaskScheduler(4);
  const a = s.submit(job(3));
  const b = s.submit(job(2));
  const placed = s.resourceOffers(offers({ x: 2 }));
  assert.deepEqual(
    placed.map((p) => [p.task.jobId, p.task.partition]),
    [
      [a.jobId, 0],
      [a.jobId, 1],
    ],
  );
  const next = s.resourceOffers(offers({ x: 2 }));
  assert.deepEqual(
    next.map((p) => [p.task.jobId, p.task.partition]),
    [
      [a.jobId, 2],
      [b.jobId, 0],
    ],
    'the second job gets what the first leaves',
  );
  // A retry of the first job still goes before the second job's waiting task.
  s.taskFailed(next[0]?.task.taskId as number, boom());
  assert.deepEqual(
    s.resourceOffers(offers({ y: 1 })).map((p) => [p.task.jobId, p.task.partition]),
    [[a.jobId, 2]],
  );
  assert.deepEqual(
    s.resourceOffers(offers({ y: 1 })).map((p) => [p.task.jobId, p.task.partition]),
    [[b.jobId, 1]],
  );
  assert.equal(await settled(a.done), false);
  assert.equal(await settled(b.done), false);
});

test('abort fails the job with the message given and returns its running tasks, to be killed', async () => {
  const s = new TaskScheduler(4);
  const a = s.submit(job(3));
  const b = s.submit(job(1));
  const placed = s.resourceOffers(offers({ x: 2, y: 2 }));
  const toKill = s.abort(a.jobId, 'Serialized task 0:0 was too big');
  assert.deepEqual(
    toKill.map((k) => k.taskId).sort(),
    placed
      .filter((p) => p.task.jobId === a.jobId)
      .map((p) => p.task.taskId)
      .sort(),
  );
  await assert.rejects(a.done, {
    name: 'JobFailedError',
    message: 'Serialized task 0:0 was too big',
  });
  assert.deepEqual(s.abort(a.jobId, 'again'), [], 'aborting twice does nothing');
  assert.equal(await settled(b.done), false, 'the other job goes on');
  s.abortAll('The application was stopped');
  await assert.rejects(b.done, { message: 'The application was stopped' });
  assert.equal(s.hasPending, false);
  assert.equal(s.runningCount, 0);
});

test('reports about tasks it never placed are ignored', () => {
  const s = new TaskScheduler(4);
  assert.equal(s.taskFinished(42, 'x'), undefined);
  assert.equal(s.taskFailed(42, boom()), undefined);
  assert.equal(s.jobOf(42), undefined);
});

test('tasks that killed their executor count as failures after the fact; the job aborts at maxFailures with their reason', async () => {
  const s = new TaskScheduler(2);
  const { done } = s.submit(job(2));
  s.resourceOffers(offers({ a: 2 }));
  const lost = s.executorLost('a');
  assert.equal(lost.length, 2);
  const oom = (t: { taskId: number }) => ({
    name: 'OutOfMemoryError',
    message: `task ${t.taskId} ran out`,
  });
  // Only partition 0's task held a core: it counts once, and runs again (attempt 1).
  assert.deepEqual(
    s.lostTasksFailed(
      lost.filter((t) => t.partition === 0),
      oom,
    ),
    [],
  );
  const again = s.resourceOffers(offers({ b: 2 }));
  assert.deepEqual(placements(again).sort(), [
    ['b', 0, 1],
    ['b', 1, 0],
  ]);
  const second = s.executorLost('b').filter((t) => t.partition === 0);
  const kill = s.lostTasksFailed(second, oom);
  assert.deepEqual(kill, [], 'nothing of the job runs any more');
  await assert.rejects(done, {
    name: 'JobFailedError',
    message: new RegExp(
      `^Job aborted due to stage failure: Task 0 in stage 0\\.0 failed 2 times, most recent failure: Lost task 0\\.1 in stage 0\\.0 \\(TID ${second[0]?.taskId}, executor b\\): OutOfMemoryError: task ${second[0]?.taskId} ran out$`,
    ),
  });
  assert.deepEqual(s.lostTasksFailed(second, oom), [], 'a job gone counts nothing');
});
