/**
 * The driver's report to its master (pure logic over a real bus; the send is a function): tasks
 * one by one up to the budget, start and end both, the rest coalesced with exact counts; one
 * report in flight at a time; a report refused for the master's rate sent again when it says;
 * whatever is left sent on stop. The master's side is
 * test/master/operations/appStatus.test.ts, and both together test/http/apiV1.test.ts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LiveListenerBus } from '../../../../backend/app/driver/LiveListenerBus.js';
import { MasterStatusReporter } from '../../../../backend/app/driver/status/MasterStatusReporter.js';
import { AppStatusStore } from '../../../../backend/appstatus/AppStatusStore.js';
import { RpcError, RpcErrorCode } from '../../../../backend/protocol/errors.js';
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

test('a report the master refuses for its rate is sent again, whole, when the master says; one refused for another bound is not', async () => {
  const bus = new LiveListenerBus();
  let now = 10_000;
  const sent: { events: WickListenerEvent[]; coalesced: TaskEndsCoalesced[] }[] = [];
  const answers: (RpcError | undefined)[] = [
    new RpcError(RpcErrorCode.RateLimited, 'more than 20000 events in a second', {
      retryAfterMs: 300,
    }),
  ];
  const reporter = new MasterStatusReporter(
    bus,
    async (events, coalesced) => {
      sent.push({ events, coalesced });
      const answer = answers.shift();
      if (answer) throw answer;
    },
    { tasksPerSecond: 5, intervalMs: 60_000, now: () => now },
  );
  runTasks(bus, 20);
  await reporter.flush();
  assert.equal(sent.length, 1);
  const refused = sent[0];
  assert.ok(refused && refused.events.length > 0 && refused.coalesced.length > 0);
  // More tasks of the same stage end while the report waits: their counts join the kept ones.
  for (let t = 20; t < 22; t++) {
    bus.post({
      event: 'WickListenerTaskEnd',
      taskId: t,
      executorId: '0',
      state: 'FINISHED',
      durationMs: 1,
      stageId: 0,
      stageAttemptId: 0,
      index: t,
    });
  }
  now += 299;
  await reporter.flush();
  assert.equal(sent.length, 1, 'nothing is sent before retryAfterMs');
  now += 1;
  await reporter.flush();
  assert.equal(sent.length, 2);
  assert.deepEqual(sent[1]?.events, refused.events, 'the same events, in the same order');
  const finished = (r: (typeof sent)[number] | undefined) =>
    (r?.coalesced ?? []).reduce((n, c) => n + c.finished, 0);
  assert.equal(finished(sent[1]), finished(refused) + 2, 'and the counts, with the later ends');

  // Refused for another bound: gone, and the next report goes on without it.
  answers.push(new RpcError(RpcErrorCode.InvalidParams, 'more than 10000 jobs running at once'));
  bus.post({ event: 'WickListenerJobStart', jobId: 1, stageIds: [], time: 3 });
  await reporter.flush();
  bus.post({ event: 'WickListenerJobStart', jobId: 2, stageIds: [], time: 3 });
  await reporter.flush();
  assert.deepEqual(
    sent.slice(2).map((r) => r.events.map((e) => (e as { jobId: number }).jobId)),
    [[1], [2]],
  );
  await reporter.stop();
});
