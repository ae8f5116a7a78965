import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AppSummaryBuilder } from '../../backend/history/AppHistorySummary.js';
import { appEvents } from './appEvents.js';

test('a job that succeeded and one that failed: their statuses, stages and tasks', () => {
  const b = new AppSummaryBuilder({ maxJobs: 100, maxStages: 100 });
  for (const e of appEvents('app-1')) b.add(e);
  const s = b.result();
  assert.equal(s.appId, 'app-1');
  assert.equal(s.user, 'ann');
  assert.equal(s.endTime, Date.UTC(2026, 11, 1, 12) + 60);
  assert.deepEqual(
    s.jobs.map((j) => [j.jobId, j.status, j.error]),
    [
      [0, 'SUCCEEDED', undefined],
      [1, 'FAILED', 'Job aborted: Error: boom'],
    ],
  );
  assert.deepEqual(
    s.stages.map((st) => [
      st.stageId,
      st.jobId,
      st.status,
      st.numCompleteTasks,
      st.numFailedTasks,
      st.numTasks,
    ]),
    [
      [0, 0, 'COMPLETE', 2, 0, 2],
      [1, 0, 'COMPLETE', 1, 0, 1],
      [2, 1, 'FAILED', 0, 1, 1],
    ],
    "job 1's stage 0 ran in job 0: its row is job 0's, and job 1 lists it",
  );
  assert.equal(
    s.stages.find((st) => st.stageId === 2)?.failureReason,
    'Task 0 failed: Error: boom',
  );
  assert.deepEqual(s.totals, {
    jobsSucceeded: 1,
    jobsFailed: 1,
    jobsRunning: 0,
    stagesCompleted: 2,
    stagesFailed: 1,
    stagesSkipped: 0,
    tasksCompleted: 3,
    tasksFailed: 1,
    executorsAdded: 1,
    jobsDropped: 0,
    stagesDropped: 0,
  });
});

test('a log that stops mid-job leaves that job RUNNING and its stage ACTIVE with its running task', () => {
  const b = new AppSummaryBuilder({ maxJobs: 100, maxStages: 100 });
  const events = appEvents('app-2', 0, false);
  // Up to job 1's task start.
  for (const e of events.slice(
    0,
    events.findIndex((x) => x.event === 'WickListenerTaskEnd' && x.taskId === 3),
  ))
    b.add(e);
  const s = b.result();
  assert.equal(s.endTime, undefined);
  assert.equal(s.jobs[1]?.status, 'RUNNING');
  assert.equal(s.totals.jobsRunning, 1);
  const active = s.stages.find((st) => st.stageId === 2);
  assert.equal(active?.status, 'ACTIVE');
  assert.equal(active?.numActiveTasks, 1);
});

test('past its bounds the oldest finished jobs and stages go, the running stay, the totals count all', () => {
  const b = new AppSummaryBuilder({ maxJobs: 3, maxStages: 2 });
  b.add({ event: 'WickListenerJobStart', jobId: 100, stageIds: [100], time: 1 });
  b.add({
    event: 'WickListenerStageSubmitted',
    stageId: 100,
    stageAttemptId: 0,
    jobId: 100,
    name: 'long',
    numTasks: 1,
    time: 1,
  });
  for (let j = 0; j < 10; j++) {
    b.add({ event: 'WickListenerJobStart', jobId: j, stageIds: [j], time: 2 + j });
    b.add({
      event: 'WickListenerStageSubmitted',
      stageId: j,
      stageAttemptId: 0,
      jobId: j,
      name: `s${j}`,
      numTasks: 1,
      time: 2 + j,
    });
    b.add({
      event: 'WickListenerStageCompleted',
      stageId: j,
      stageAttemptId: 0,
      name: `s${j}`,
      numTasks: 1,
      time: 3 + j,
    });
    b.add({ event: 'WickListenerJobEnd', jobId: j, result: 'JobSucceeded', time: 3 + j });
  }
  const s = b.result();
  assert.deepEqual(
    s.jobs.map((j) => j.jobId),
    [100, 8, 9],
  );
  assert.deepEqual(
    s.stages.map((st) => st.stageId),
    [100, 9],
  );
  assert.equal(s.totals.jobsSucceeded, 10);
  assert.equal(s.totals.jobsRunning, 1);
  assert.equal(s.totals.jobsDropped, 8);
  assert.equal(s.totals.stagesDropped, 9);
});

test('a stage a job lists and nothing ever ran is SKIPPED when the job ends', () => {
  const b = new AppSummaryBuilder({ maxJobs: 10, maxStages: 10 });
  b.add({ event: 'WickListenerJobStart', jobId: 0, stageIds: [5, 6], time: 1 });
  b.add({
    event: 'WickListenerStageSubmitted',
    stageId: 6,
    stageAttemptId: 0,
    jobId: 0,
    name: 'r',
    numTasks: 1,
    time: 1,
  });
  b.add({
    event: 'WickListenerStageCompleted',
    stageId: 6,
    stageAttemptId: 0,
    name: 'r',
    numTasks: 1,
    time: 2,
  });
  b.add({ event: 'WickListenerJobEnd', jobId: 0, result: 'JobSucceeded', time: 2 });
  const s = b.result();
  assert.deepEqual(
    s.stages.map((st) => [st.stageId, st.status]),
    [
      [6, 'COMPLETE'],
      [5, 'SKIPPED'],
    ],
  );
  assert.equal(s.totals.stagesSkipped, 1);
});
