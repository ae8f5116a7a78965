/**
 * The application status store, fed events by hand (pure logic): every kind of listener event,
 * tasks reported coalesced, the caps checked before a peer's report, and what is forgotten past
 * the retention settings (the oldest finished first, running ones kept, counts exact).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AppStatusStore, DEFAULT_RETENTION } from '../../backend/appstatus/AppStatusStore.js';
import { progressOf } from '../../backend/appstatus/progress.js';
import {
  environmentInfo,
  executorSummary,
  jobData,
  sparkDate,
  stageData,
  taskList,
} from '../../backend/appstatus/sparkApi.js';
import type { WickListenerEvent } from '../../backend/protocol/listener.js';

const T0 = Date.UTC(2026, 0, 2, 3, 4, 5, 678);

function feed(store: AppStatusStore, events: WickListenerEvent[]): void {
  for (const e of events) store.post(e);
}

/** A job 0 of a shuffle: stage 0 (2 map tasks) then stage 1 (1 reduce task). */
function wordCount(): WickListenerEvent[] {
  return [
    { event: 'WickListenerApplicationStart', appName: 'wc', appId: 'app-1', time: T0, user: 'u' },
    {
      event: 'WickListenerEnvironmentUpdate',
      runtime: { nodeVersion: 'v20', platform: 'linux x64', wickVersion: '0.1.0' },
      wickProperties: [{ key: 'wick.app.name', value: 'wc' }],
    },
    { event: 'WickListenerExecutorAdded', executorId: '0', host: 'h0', cores: 2 },
    { event: 'WickListenerJobStart', jobId: 0, stageIds: [0, 1], time: T0 + 10 },
    {
      event: 'WickListenerStageSubmitted',
      stageId: 0,
      stageAttemptId: 0,
      jobId: 0,
      name: 'map',
      numTasks: 2,
      time: T0 + 11,
    },
    ...[0, 1].map(
      (i): WickListenerEvent => ({
        event: 'WickListenerTaskStart',
        taskId: i,
        stageId: 0,
        stageAttemptId: 0,
        index: i,
        attempt: 0,
        executorId: '0',
        time: T0 + 12,
      }),
    ),
    {
      event: 'WickListenerTaskEnd',
      taskId: 0,
      executorId: '0',
      state: 'FINISHED',
      durationMs: 5,
      stageId: 0,
      stageAttemptId: 0,
      index: 0,
      metrics: { shuffleWrite: { bytesWritten: 100, recordsWritten: 3 } },
    },
    {
      event: 'WickListenerTaskEnd',
      taskId: 1,
      executorId: '0',
      state: 'FAILED',
      durationMs: 7,
      stageId: 0,
      stageAttemptId: 0,
      index: 1,
      error: 'Error: boom',
    },
    {
      event: 'WickListenerStageCompleted',
      stageId: 0,
      stageAttemptId: 0,
      name: 'map',
      numTasks: 2,
      time: T0 + 20,
    },
    {
      event: 'WickListenerStageSubmitted',
      stageId: 1,
      stageAttemptId: 0,
      jobId: 0,
      name: 'reduce',
      numTasks: 1,
      time: T0 + 21,
    },
    {
      event: 'WickListenerTaskStart',
      taskId: 2,
      stageId: 1,
      stageAttemptId: 0,
      index: 0,
      attempt: 0,
      executorId: '0',
      time: T0 + 22,
    },
  ];
}

test('every event kind lands where /api/v1 reads it', () => {
  const s = new AppStatusStore();
  feed(s, wordCount());
  assert.deepEqual({ ...s.app }, { appId: 'app-1', appName: 'wc', user: 'u', startTime: T0 });
  assert.deepEqual(environmentInfo(s).sparkProperties, [['wick.app.name', 'wc']]);
  assert.equal(environmentInfo(s).runtime.nodeVersion, 'v20');

  // Live: stage 1 runs one task; the job counts both stages' tasks.
  const job = s.job(0);
  assert.ok(job);
  assert.equal(job.status, 'RUNNING');
  assert.deepEqual(
    {
      numTasks: job.counts.numTasks,
      active: job.counts.numActiveTasks,
      done: job.counts.numCompletedTasks,
      failed: job.counts.numFailedTasks,
    },
    { numTasks: 3, active: 1, done: 1, failed: 1 },
  );
  const map = s.stage(0, 0);
  assert.ok(map);
  assert.equal(map.status, 'COMPLETE');
  assert.equal(map.totals.shuffleWriteBytes, 100);
  assert.equal(map.totals.executorRunTime, 12);
  const mapJson = stageData(map);
  assert.equal(mapJson.numCompleteTasks, 1);
  assert.equal(mapJson.numFailedTasks, 1);
  assert.equal(mapJson.submissionTime, sparkDate(T0 + 11));
  assert.equal(mapJson.firstTaskLaunchedTime, sparkDate(T0 + 12));
  const tasks = taskList(map, () => 'h0', { offset: 0, length: 20, sortBy: '-runtime' });
  assert.deepEqual(
    tasks.map((t) => [t.taskId, t.status, t.duration, t.host]),
    [
      [1, 'FAILED', 7, 'h0'],
      [0, 'SUCCESS', 5, 'h0'],
    ],
  );
  assert.equal(tasks[0]?.errorMessage, 'Error: boom');
  assert.equal(tasks[1]?.taskMetrics?.shuffleWriteMetrics.bytesWritten, 100);
  assert.equal(
    taskList(map, () => 'h0', { offset: 1, length: 1, sortBy: 'ID' })[0]?.taskId,
    1,
    'offset and length page the list',
  );
  const exec = s.executors()[0];
  assert.ok(exec);
  assert.deepEqual(
    [exec.activeTasks, exec.completedTasks, exec.failedTasks, exec.totalShuffleWrite],
    [1, 1, 1, 100],
  );
  assert.equal(progressOf(s).activeStages[0]?.name, 'reduce');

  // The end: the reduce task finishes reading the shuffle, the job ends, the executor goes.
  feed(s, [
    {
      event: 'WickListenerTaskEnd',
      taskId: 2,
      executorId: '0',
      state: 'FINISHED',
      durationMs: 3,
      stageId: 1,
      stageAttemptId: 0,
      index: 0,
      metrics: {
        shuffleRead: {
          localBytesRead: 60,
          remoteBytesRead: 40,
          remoteBytesReadToDisk: 0,
          recordsRead: 3,
          fetchWaitTimeMs: 0,
        },
      },
    },
    {
      event: 'WickListenerStageCompleted',
      stageId: 1,
      stageAttemptId: 0,
      name: 'reduce',
      numTasks: 1,
      time: T0 + 30,
    },
    { event: 'WickListenerJobEnd', jobId: 0, result: 'JobSucceeded', time: T0 + 31 },
    { event: 'WickListenerExecutorRemoved', executorId: '0', reason: 'gone', workerLost: false },
    {
      event: 'WickListenerWorkerRemoved',
      workerId: 'worker-1',
      host: 'h0',
      message: 'lost',
    },
    { event: 'WickListenerApplicationEnd', time: T0 + 40 },
  ]);
  const done = jobData(s.job(0) as NonNullable<ReturnType<typeof s.job>>);
  assert.equal(done.status, 'SUCCEEDED');
  assert.equal(done.completionTime, sparkDate(T0 + 31));
  assert.equal(done.numCompletedStages, 2);
  assert.equal(done.numActiveStages, 0);
  assert.equal(done.numSkippedStages, 0);
  assert.equal(
    stageData(s.stage(1, 0) as NonNullable<ReturnType<typeof s.stage>>).shuffleReadBytes,
    100,
  );
  const e = executorSummary(s.executors()[0] as NonNullable<ReturnType<typeof s.executors>[0]>);
  assert.equal(e.isActive, false);
  assert.equal(e.removeReason, 'gone');
  assert.equal(e.totalShuffleRead, 100);
  assert.equal(s.app.endTime, T0 + 40);
  assert.equal(sparkDate(T0), '2026-01-02T03:04:05.678GMT');
});

test('a stage never submitted by a job that succeeded is counted skipped; a rerun is its own attempt', () => {
  const s = new AppStatusStore();
  feed(s, [
    { event: 'WickListenerJobStart', jobId: 1, stageIds: [0, 1], time: T0 },
    {
      event: 'WickListenerStageSubmitted',
      stageId: 1,
      stageAttemptId: 0,
      jobId: 1,
      name: 'r',
      numTasks: 1,
      time: T0,
    },
    {
      event: 'WickListenerStageCompleted',
      stageId: 1,
      stageAttemptId: 0,
      name: 'r',
      numTasks: 1,
      time: T0,
      failureReason: 'FetchFailed',
    },
    {
      event: 'WickListenerStageSubmitted',
      stageId: 1,
      stageAttemptId: 1,
      jobId: 1,
      name: 'r',
      numTasks: 1,
      time: T0,
    },
    {
      event: 'WickListenerStageCompleted',
      stageId: 1,
      stageAttemptId: 1,
      name: 'r',
      numTasks: 1,
      time: T0,
    },
    { event: 'WickListenerJobEnd', jobId: 1, result: 'JobSucceeded', time: T0 },
  ]);
  const j = jobData(s.job(1) as NonNullable<ReturnType<typeof s.job>>);
  assert.equal(j.numSkippedStages, 1);
  assert.equal(j.numFailedStages, 1);
  assert.deepEqual(
    s.stageAttemptsOf(1).map((a) => [a.attemptId, a.status, a.failureReason]),
    [
      [1, 'COMPLETE', undefined],
      [0, 'FAILED', 'FetchFailed'],
    ],
  );
});

test('coalesced tasks keep the counts exact without their rows', () => {
  const s = new AppStatusStore();
  feed(s, wordCount().slice(0, 5));
  s.postCoalesced({
    stageId: 0,
    stageAttemptId: 0,
    executorId: '0',
    started: 2,
    finished: 1,
    failed: 0,
    killed: 0,
    executorRunTimeMs: 9,
    shuffleReadBytes: 0,
    shuffleReadRecords: 0,
    shuffleWriteBytes: 50,
    shuffleWriteRecords: 2,
    memoryBytesSpilled: 0,
    diskBytesSpilled: 0,
  });
  const st = s.stage(0, 0);
  assert.ok(st);
  assert.deepEqual(
    [st.counts.numActiveTasks, st.counts.numCompletedTasks, st.totals.shuffleWriteBytes],
    [1, 1, 50],
  );
  assert.equal(st.tasks.size, 0);
  assert.equal(s.job(0)?.counts.numCompletedTasks, 1);
  assert.equal(s.executors()[0]?.completedTasks, 1);
});

test('finished jobs and stages past the retention go, the oldest first; running ones stay', () => {
  const s = new AppStatusStore({ ...DEFAULT_RETENTION, jobs: 2, stages: 2 });
  const runJob = (id: number, end: boolean) => {
    feed(s, [
      { event: 'WickListenerJobStart', jobId: id, stageIds: [id], time: T0 + id },
      {
        event: 'WickListenerStageSubmitted',
        stageId: id,
        stageAttemptId: 0,
        jobId: id,
        name: `s${id}`,
        numTasks: 1,
        time: T0 + id,
      },
    ]);
    if (!end) return;
    feed(s, [
      {
        event: 'WickListenerStageCompleted',
        stageId: id,
        stageAttemptId: 0,
        name: `s${id}`,
        numTasks: 1,
        time: T0 + id,
      },
      { event: 'WickListenerJobEnd', jobId: id, result: 'JobSucceeded', time: T0 + id },
    ]);
  };
  runJob(0, false);
  for (let id = 1; id <= 5; id++) runJob(id, true);
  assert.deepEqual(
    s.jobList().map((j) => j.jobId),
    [5, 4, 0],
    'the two latest finished, and the running one',
  );
  assert.deepEqual(
    s.stageList().map((x) => x.stageId),
    [5, 4, 0],
  );
  assert.equal(s.activeJobCount(), 1);
  assert.equal(progressOf(s).jobs.succeeded, 2);
});

test("a task's late end for a stage attempt forgotten meanwhile counts nowhere, even the one last found", () => {
  // Jobs are kept longer than stages here: the job of the forgotten stage is still there to count.
  const s = new AppStatusStore({ ...DEFAULT_RETENTION, jobs: 10, stages: 1 });
  const stage = (id: number, jobId: number): WickListenerEvent[] => [
    {
      event: 'WickListenerStageSubmitted',
      stageId: id,
      stageAttemptId: 0,
      jobId,
      name: `s${id}`,
      numTasks: 1,
      time: T0,
    },
    {
      event: 'WickListenerTaskStart',
      taskId: id,
      stageId: id,
      stageAttemptId: 0,
      index: 0,
      attempt: 0,
      executorId: '0',
      time: T0,
    },
    {
      event: 'WickListenerStageCompleted',
      stageId: id,
      stageAttemptId: 0,
      name: `s${id}`,
      numTasks: 1,
      time: T0,
    },
  ];
  const end = (taskId: number, stageId: number): WickListenerEvent => ({
    event: 'WickListenerTaskEnd',
    taskId,
    executorId: '0',
    state: 'FINISHED',
    stageId,
    stageAttemptId: 0,
  });
  feed(s, [
    { event: 'WickListenerJobStart', jobId: 0, stageIds: [0, 1], time: T0 },
    ...stage(0, 0),
  ]);
  // Stage 0's task start was the last task event: its attempt is the one last found.
  feed(s, [{ event: 'WickListenerJobStart', jobId: 1, stageIds: [1], time: T0 }]);
  feed(
    s,
    stage(1, 1).filter((e) => e.event !== 'WickListenerTaskStart'),
  );
  assert.deepEqual(
    s.stageList().map((x) => x.stageId),
    [1],
    'stage 0 is forgotten',
  );
  const before = { ...s.job(0)?.counts };
  s.post(end(0, 0));
  assert.deepEqual(s.job(0)?.counts, before, "job 0's counts did not change");
  assert.equal(s.stage(0, 0), undefined);
  // The store still counts a task of a stage it keeps (the positive case).
  s.post({ ...end(1, 1) });
  assert.equal(s.job(1)?.counts.numCompletedTasks, 1);
});

test('a stage keeps at most retainedTasks tasks, forgetting finished ones; dead executors are bounded too', () => {
  const s = new AppStatusStore({ ...DEFAULT_RETENTION, tasks: 3, deadExecutors: 1 });
  feed(s, wordCount().slice(0, 5));
  for (let t = 10; t < 20; t++) {
    feed(s, [
      {
        event: 'WickListenerTaskStart',
        taskId: t,
        stageId: 0,
        stageAttemptId: 0,
        index: t,
        attempt: 0,
        executorId: '0',
        time: T0,
      },
      {
        event: 'WickListenerTaskEnd',
        taskId: t,
        executorId: '0',
        state: 'FINISHED',
        stageId: 0,
        stageAttemptId: 0,
        index: t,
      },
    ]);
  }
  const st = s.stage(0, 0);
  assert.ok(st);
  assert.deepEqual([...st.tasks.keys()], [17, 18, 19]);
  assert.equal(st.counts.numCompletedTasks, 10, 'counts stay exact');
  for (const id of ['a', 'b', 'c']) {
    feed(s, [
      { event: 'WickListenerExecutorAdded', executorId: id, host: 'h', cores: 1 },
      { event: 'WickListenerExecutorRemoved', executorId: id, reason: 'r', workerLost: false },
    ]);
  }
  assert.deepEqual(
    s.executors().map((e) => [e.id, e.isActive]),
    [
      ['0', true],
      ['c', false],
    ],
  );
});

test('check names the bound a batch would pass, counting what ends within it', () => {
  const s = new AppStatusStore();
  const starts = (n: number): WickListenerEvent[] =>
    Array.from({ length: n }, (_, i) => ({
      event: 'WickListenerJobStart',
      jobId: i,
      stageIds: [],
      time: T0,
    }));
  const caps = { jobs: 3, stages: 3, executors: 3 };
  assert.equal(s.check(starts(3), caps), undefined);
  assert.equal(s.check(starts(4), caps), 'more than 3 jobs running at once');
  const churn: WickListenerEvent[] = [];
  for (let i = 0; i < 10; i++) {
    churn.push({ event: 'WickListenerJobStart', jobId: i, stageIds: [], time: T0 });
    churn.push({ event: 'WickListenerJobEnd', jobId: i, result: 'JobSucceeded', time: T0 });
  }
  assert.equal(s.check(churn, caps), undefined, 'jobs that end within the batch do not add up');
  const execs: WickListenerEvent[] = ['a', 'b', 'c', 'd'].map((id) => ({
    event: 'WickListenerExecutorAdded',
    executorId: id,
    host: 'h',
    cores: 1,
  }));
  assert.equal(s.check(execs, caps), 'more than 3 executors at once');
  assert.equal(s.size.jobs, 0, 'check changes nothing');
});
