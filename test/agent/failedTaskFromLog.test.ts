import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FailedTaskFinder } from '../../backend/agent/failedTaskFromLog.js';
import type { WickListenerEvent } from '../../backend/protocol/listener.js';

const t0 = 1_000;
const jobStart = (jobId: number, stageIds: number[]): WickListenerEvent => ({
  event: 'WickListenerJobStart',
  jobId,
  stageIds,
  time: t0,
});
const taskEnd = (
  taskId: number,
  stageId: number,
  index: number,
  state: 'FINISHED' | 'FAILED',
  extra: { jobId?: number; error?: string; stageAttemptId?: number } = {},
): WickListenerEvent => ({
  event: 'WickListenerTaskEnd',
  taskId,
  stageId,
  stageAttemptId: extra.stageAttemptId ?? 0,
  index,
  executorId: String(taskId % 2),
  state,
  durationMs: 3,
  ...(extra.jobId !== undefined ? { jobId: extra.jobId } : {}),
  ...(extra.error !== undefined ? { error: extra.error } : {}),
});
const jobEnd = (jobId: number, failed: boolean, error?: string): WickListenerEvent => ({
  event: 'WickListenerJobEnd',
  jobId,
  result: failed ? 'JobFailed' : 'JobSucceeded',
  time: t0 + 9,
  ...(error ? { error } : {}),
});
const feed = (events: WickListenerEvent[]) => {
  const f = new FailedTaskFinder();
  for (const e of events) f.post(e);
  return f.result;
};

test("a job aborted by a task: that task's stage, partition, failures and last error", () => {
  const found = feed([
    jobStart(0, [0]),
    taskEnd(0, 0, 0, 'FINISHED'),
    taskEnd(1, 0, 2, 'FAILED', { error: 'Error: bad record 50\n    at /w/job.ts:7:11' }),
    taskEnd(2, 0, 1, 'FINISHED'),
    taskEnd(3, 0, 2, 'FAILED', { error: 'Error: bad record 50 (again)\n    at /w/job.ts:7:11' }),
    jobEnd(0, true, 'Job 0 aborted: task 2 of stage 0 failed 2 times'),
  ]);
  assert.deepEqual(found, {
    jobId: 0,
    stageId: 0,
    stageAttemptId: 0,
    partitionId: 2,
    taskId: 3,
    executorId: '1',
    failures: 2,
    error: 'Error: bad record 50 (again)\n    at /w/job.ts:7:11',
    jobError: 'Job 0 aborted: task 2 of stage 0 failed 2 times',
  });
});

test('the last failed job is the one taken; a task that failed and then succeeded fails nothing', () => {
  const found = feed([
    jobStart(0, [0, 1]),
    taskEnd(0, 1, 0, 'FAILED', { error: 'flaky' }),
    taskEnd(1, 1, 0, 'FINISHED'),
    jobEnd(0, false),
    jobStart(1, [2]),
    taskEnd(2, 2, 1, 'FAILED', { error: 'first' }),
    jobEnd(1, true),
    // A stage submitted that JobStart did not list (a rerun): its tasks are the job's too.
    jobStart(2, [3]),
    {
      event: 'WickListenerStageSubmitted',
      stageId: 4,
      stageAttemptId: 1,
      jobId: 2,
      name: 'map',
      numTasks: 2,
      time: t0,
    },
    taskEnd(3, 4, 1, 'FAILED', { error: 'second', stageAttemptId: 1 }),
    jobEnd(2, true),
  ]);
  assert.equal(found?.jobId, 2);
  assert.equal(found?.stageId, 4);
  assert.equal(found?.stageAttemptId, 1);
  assert.equal(found?.partitionId, 1);
  assert.equal(found?.error, 'second');
  // A succeeded job's failed attempt is no job's failure.
  assert.equal(
    feed([
      jobStart(0, [0]),
      taskEnd(0, 0, 0, 'FAILED'),
      taskEnd(1, 0, 0, 'FINISHED'),
      jobEnd(0, false),
    ]),
    undefined,
  );
});

test('a job that failed with no failed task (the driver gave up), or a log cut before its end, names none', () => {
  assert.equal(feed([jobStart(0, [0]), jobEnd(0, true, 'cancelled')]), undefined);
  assert.equal(feed([jobStart(0, [0]), taskEnd(0, 0, 0, 'FAILED', { error: 'x' })]), undefined);
  // A task whose stage no job claims (a cut log's middle) is not guessed at.
  assert.equal(feed([taskEnd(0, 9, 0, 'FAILED', { error: 'x' }), jobEnd(0, true)]), undefined);
  // Its job named in the TaskEnd itself is enough.
  assert.equal(
    feed([taskEnd(0, 9, 0, 'FAILED', { error: 'x', jobId: 0 }), jobEnd(0, true)])?.partitionId,
    0,
  );
});

test('ended jobs are forgotten: memory follows the jobs under way, not the log', () => {
  const f = new FailedTaskFinder();
  for (let j = 0; j < 1_000; j++) {
    f.post(jobStart(j, [j]));
    f.post(taskEnd(j, j, 0, 'FAILED', { error: 'e' }));
    f.post(jobEnd(j, false));
  }
  const inner = f as unknown as Record<string, Map<unknown, unknown>>;
  for (const k of ['jobOfStage', 'stagesOfJob', 'lastFailure', 'failures'])
    assert.equal(inner[k]?.size, 0, k);
});
