/**
 * The driver's report to its master (pure logic over a real bus; the send is a function): tasks
 * one by one up to the budget, start and end both, the rest coalesced with exact counts; one
 * report in flight at a time; whatever is left sent on stop. The master's side is
 * test/master/operations/appStatus.test.ts, and both together test/http/apiV1.test.ts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LiveListenerBus } from '../../../../backend/app/driver/LiveListenerBus.js';
import { MasterStatusReporter } from '../../../../backend/app/driver/status/MasterStatusReporter.js';
import { AppStatusStore } from '../../../../backend/appstatus/AppStatusStore.js';
import type { WickListenerEvent } from '../../../../backend/protocol/listener.js';
import type { TaskEndsCoalesced } from '../../../../backend/protocol/statusReport.js';

function runTasks(bus: LiveListenerBus, n: number): void {
  bus.post({
    event: 'WickListenerStageSubmitted',
    stageId: 0,
    stageAttemptId: 0,
    jobId: 0,
    name: 's',
    numTasks: n,
    time: 1,
  });
  for (let t = 0; t < n; t++) {
    bus.post({
      event: 'WickListenerTaskStart',
      taskId: t,
      stageId: 0,
      stageAttemptId: 0,
      index: t,
      attempt: 0,
      executorId: String(t % 2),
      time: 2,
    });
    bus.post({
      event: 'WickListenerTaskEnd',
      taskId: t,
      executorId: String(t % 2),
      state: t === 7 ? 'FAILED' : 'FINISHED',
      durationMs: 1,
      stageId: 0,
      stageAttemptId: 0,
      index: t,
      ...(t === 7 ? { error: 'Error: seven' } : {}),
    });
  }
}

test('tasks past the budget are coalesced, and the master builds the same counts from the reports', async () => {
  const bus = new LiveListenerBus();
  const reports: { events: WickListenerEvent[]; coalesced: TaskEndsCoalesced[] }[] = [];
  let inFlight = 0;
  let most = 0;
  const reporter = new MasterStatusReporter(
    bus,
    async (events, coalesced) => {
      inFlight++;
      most = Math.max(most, inFlight);
      await new Promise((r) => setImmediate(r));
      reports.push({ events, coalesced });
      inFlight--;
    },
    { tasksPerSecond: 5, intervalMs: 60_000 },
  );
  bus.post({ event: 'WickListenerExecutorAdded', executorId: '0', host: 'h', cores: 1 });
  bus.post({ event: 'WickListenerExecutorAdded', executorId: '1', host: 'h', cores: 1 });
  runTasks(bus, 100);
  await Promise.all([reporter.flush(), reporter.flush()]);
  await reporter.stop();
  assert.equal(most, 1, 'one report in flight at a time');

  const events = reports.flatMap((r) => r.events);
  const starts = events.filter((e) => e.event === 'WickListenerTaskStart');
  const ends = events.filter((e) => e.event === 'WickListenerTaskEnd');
  assert.deepEqual(
    starts.map((e) => e.taskId),
    [0, 1, 2, 3, 4],
  );
  assert.deepEqual(
    ends.map((e) => e.taskId),
    [0, 1, 2, 3, 4],
    'a task reported one by one has its end reported so too',
  );
  const coalesced = reports.flatMap((r) => r.coalesced);
  assert.deepEqual(coalesced.map((c) => [c.executorId, c.started, c.finished, c.failed]).sort(), [
    ['0', 47, 47, 0],
    ['1', 48, 47, 1],
  ]);
  assert.equal(coalesced.find((c) => c.failed)?.lastError, 'Error: seven');

  const store = new AppStatusStore();
  for (const r of reports) {
    for (const e of r.events) store.post(e);
    for (const c of r.coalesced) store.postCoalesced(c);
  }
  const stage = store.stage(0, 0);
  assert.deepEqual(
    [
      stage?.counts.numCompletedTasks,
      stage?.counts.numFailedTasks,
      stage?.counts.numActiveTasks,
      stage?.tasks.size,
    ],
    [99, 1, 0, 5],
  );
  assert.equal(reporter.backlog.events, 0);
  assert.equal(bus.size, 0, 'stop unsubscribed');
});
