/**
 * What the dashboard's stage and job pages read of a stage attempt: Spark's taskSummary (each
 * metric at each quantile, over successful tasks), taskList by status, and Wick's parentIds.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Hono } from 'hono';
import { AppStatusStore } from '../../backend/appstatus/AppStatusStore.js';
import { stageData, taskList, taskSummary } from '../../backend/appstatus/sparkApi.js';
import { mountApiV1 } from '../../backend/http/apiV1.js';
import type { WickListenerEvent } from '../../backend/protocol/listener.js';

const T0 = Date.UTC(2026, 0, 2, 3, 4, 5, 678);

/** Stage 1 (parent 0) with 5 tasks: durations 10, 20, 30, 40 and a failed one of 99. */
function store(): AppStatusStore {
  const s = new AppStatusStore();
  const events: WickListenerEvent[] = [
    { event: 'WickListenerApplicationStart', appName: 'a', appId: 'app-1', time: T0, user: 'u' },
    { event: 'WickListenerExecutorAdded', executorId: '0', host: 'h0', cores: 2 },
    { event: 'WickListenerJobStart', jobId: 0, stageIds: [0, 1], time: T0 },
    {
      event: 'WickListenerStageSubmitted',
      stageId: 1,
      stageAttemptId: 0,
      jobId: 0,
      name: 'reduce',
      numTasks: 5,
      time: T0,
      parentIds: [0],
    },
  ];
  const durations = [30, 10, 40, 20, 99];
  durations.forEach((d, i) => {
    events.push({
      event: 'WickListenerTaskStart',
      taskId: i,
      stageId: 1,
      stageAttemptId: 0,
      index: i,
      attempt: 0,
      executorId: '0',
      time: T0 + 1,
    });
    events.push({
      event: 'WickListenerTaskEnd',
      taskId: i,
      stageId: 1,
      stageAttemptId: 0,
      index: i,
      executorId: '0',
      state: i === 4 ? 'FAILED' : 'FINISHED',
      durationMs: d,
      ...(i === 4 ? { error: 'Error: boom\n    at f' } : {}),
    });
  });
  for (const e of events) s.post(e);
  return s;
}

test("taskSummary: Spark's pick of the sorted values of successful tasks at each quantile", () => {
  const stage = store().stage(1, 0);
  assert.ok(stage);
  const sum = taskSummary(stage, [0, 0.25, 0.5, 0.75, 1]);
  assert.deepEqual(sum?.quantiles, [0, 0.25, 0.5, 0.75, 1]);
  // Sorted [10, 20, 30, 40]: index round(q × 3) → 0, 1, 2, 2, 3 (the failed 99 is left out).
  assert.deepEqual(sum?.duration, [10, 20, 30, 30, 40]);
  const empty = new AppStatusStore();
  empty.post({
    event: 'WickListenerStageSubmitted',
    stageId: 0,
    stageAttemptId: 0,
    jobId: 0,
    name: 'x',
    numTasks: 1,
    time: T0,
  });
  const none = empty.stage(0, 0);
  assert.ok(none);
  assert.equal(taskSummary(none, [0.5]), undefined, 'no successful task yet');
});

test('taskList by status, the slowest first; parentIds in StageData', () => {
  const stage = store().stage(1, 0);
  assert.ok(stage);
  const failed = taskList(stage, () => 'h0', {
    offset: 0,
    length: 10,
    sortBy: 'ID',
    status: new Set(['FAILED']),
  });
  assert.deepEqual(
    failed.map((t) => [t.taskId, t.status, t.errorMessage]),
    [[4, 'FAILED', 'Error: boom\n    at f']],
  );
  const slowest = taskList(stage, () => 'h0', { offset: 0, length: 2, sortBy: '-runtime' });
  assert.deepEqual(
    slowest.map((t) => t.duration),
    [99, 40],
  );
  assert.deepEqual(stageData(stage).parentIds, [0]);
});

test('/api/v1: taskSummary and taskList?status, and a bad value quoted with what was expected', async () => {
  const s = store();
  const app = new Hono();
  mountApiV1(app, () => ({
    applications: () => [],
    store: (id) => (id === 'app-1' ? s : undefined),
  }));
  const get = async (path: string) => {
    const res = await app.request(`/api/v1/applications/app-1/stages/1/0${path}`);
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const sum = await get('/taskSummary?quantiles=0,0.5,1');
  assert.equal(sum.status, 200);
  assert.deepEqual(sum.body.duration, [10, 30, 40]);
  assert.deepEqual((await get('/taskSummary')).body.quantiles, [0.05, 0.25, 0.5, 0.75, 0.95]);
  const listed = await get('/taskList?status=failed&status=killed');
  assert.deepEqual(
    (listed.body as unknown as { taskId: number }[]).map((t) => t.taskId),
    [4],
  );
  for (const [path, said] of [
    ['/taskSummary?quantiles=0.5,2', /quantiles="0.5,2": expected up to 101 numbers from 0 to 1/],
    ['/taskSummary?quantiles=abc', /quantiles="abc"/],
    [`/taskSummary?quantiles=${Array(102).fill('0.5').join(',')}`, /expected up to 101/],
    ['/taskList?status=lost', /status="lost": expected one of running, success, failed, killed/],
  ] as const) {
    const r = await get(path);
    assert.equal(r.status, 400, path);
    assert.match(String(r.body.error), said);
  }
});
