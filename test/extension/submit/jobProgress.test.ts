import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AppSummary } from '../../../backend/protocol/state.js';
import {
  appEnded,
  jobProgressMessage,
  WAITING_FOR_EXECUTORS,
} from '../../../extension/submit/jobProgress.js';

const counts = (done: number, active: number, total: number, failed = 0) => ({
  numTasks: total,
  numActiveTasks: active,
  numCompletedTasks: done,
  numFailedTasks: failed,
  numKilledTasks: 0,
});

const runningExec = {
  appId: 'app-1',
  id: 0,
  workerId: 'w',
  workerHostPort: 'h:1',
  cores: 1,
  memory: 512,
  state: 'RUNNING',
  history: [],
} as AppSummary['executors'][number];

function app(over: Partial<AppSummary> = {}): AppSummary {
  return {
    id: 'app-1',
    name: 'Pi',
    user: 'me',
    coresGranted: 2,
    memoryPerExecutorMB: 512,
    state: 'RUNNING',
    startTime: 0,
    driver: { address: 'h:2', name: 'AppClient' },
    executors: [],
    removedExecutors: [],
    ...over,
  } as AppSummary;
}

const progress = (over: Partial<NonNullable<AppSummary['progress']>> = {}) => ({
  jobs: { active: 1, succeeded: 0, failed: 0 },
  stages: { active: 1, complete: 0, failed: 0 },
  activeJobs: [{ jobId: 2, submissionTime: 0, stageIds: [3, 4], counts: counts(120, 4, 400) }],
  activeStages: [
    {
      stageId: 4,
      attemptId: 0,
      name: 'map at pi.ts:8',
      submissionTime: 0,
      counts: counts(120, 4, 400),
    },
  ],
  lastUpdated: 0,
  ...over,
});

test('no executor yet: waiting for executors; one running but no job: says so', () => {
  assert.equal(jobProgressMessage(app({ state: 'WAITING' })), WAITING_FOR_EXECUTORS);
  assert.equal(jobProgressMessage(app({ executors: [runningExec] })), 'Running, no job yet…');
});

test("a running job: its stage's tasks as Spark's console bar counts them (done + running / total)", () => {
  assert.equal(
    jobProgressMessage(app({ executors: [runningExec], progress: progress() })),
    'Job 2 · Stage 4: 120 + 4 / 400 tasks',
  );
});

test('failed tasks, finished jobs and other running jobs are counted', () => {
  const p = progress({
    jobs: { active: 2, succeeded: 3, failed: 1 },
    activeJobs: [
      { jobId: 5, submissionTime: 0, stageIds: [7], counts: counts(1, 2, 10, 2) },
      { jobId: 6, submissionTime: 0, stageIds: [8], counts: counts(0, 0, 4) },
    ],
    activeStages: [
      { stageId: 7, attemptId: 1, name: 'x', submissionTime: 0, counts: counts(1, 2, 10, 2) },
    ],
  });
  assert.equal(
    jobProgressMessage(app({ progress: p })),
    'Job 5 (+1 more jobs) · Stage 7: 1 + 2 / 10 tasks, 2 failed · 3 jobs done, 1 failed',
  );
});

test("a job whose stages are not listed shows the job's own counts; between jobs says so", () => {
  const p = progress({ activeStages: [] });
  assert.equal(jobProgressMessage(app({ progress: p })), 'Job 2 · 120 / 400 tasks');
  const between = progress({
    jobs: { active: 0, succeeded: 1, failed: 0 },
    activeJobs: [],
    activeStages: [],
  });
  assert.equal(jobProgressMessage(app({ progress: between })), '1 job done · between jobs');
});

test('an app ends the notification once it is no longer WAITING or RUNNING, or is gone', () => {
  assert.equal(appEnded(app()), false);
  assert.equal(appEnded(app({ state: 'WAITING' })), false);
  for (const s of ['FINISHED', 'FAILED', 'KILLED'] as const)
    assert.equal(appEnded(app({ state: s })), true);
  assert.equal(appEnded(undefined), true);
});
