/**
 * StatusReporter's holding policy, driven by hand: the timers are fakes that run only when the
 * test says, and the executor's queued work is a number the test sets.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  REPORT_HOLD_MS,
  type ReportTimers,
  StatusReporter,
  type TaskReport,
} from '../../../backend/app/executor/StatusReporter.js';

class FakeTimers implements ReportTimers {
  soonQueue: (() => void)[] = [];
  held: { fn: () => void; ms: number; cancelled: boolean }[] = [];

  soon(fn: () => void): void {
    this.soonQueue.push(fn);
  }

  after(fn: () => void, ms: number): () => void {
    const t = { fn, ms, cancelled: false };
    this.held.push(t);
    return () => {
      t.cancelled = true;
    };
  }

  /** Ends the current turn: what was queued with soon() runs. */
  endTurn(): void {
    for (const fn of this.soonQueue.splice(0)) fn();
  }

  /** The hold timers expire. */
  expire(): void {
    for (const t of this.held.splice(0)) if (!t.cancelled) t.fn();
  }

  get pendingHolds(): number {
    return this.held.filter((t) => !t.cancelled).length;
  }
}

function setup() {
  const sent: TaskReport[] = [];
  let written = '';
  const state = { queuedMs: 0 };
  const timers = new FakeTimers();
  const reporter = new StatusReporter(
    (r) => sent.push(r),
    () => state.queuedMs,
    (text) => {
      written += text;
    },
    timers,
  );
  return { sent, written: () => written, state, timers, reporter };
}

const finished = (taskId: number): TaskReport => ({ taskId, state: 'FINISHED', result: taskId });

test('with little work queued, reports and their lines go out together at the end of the turn', () => {
  const { sent, written, state, timers, reporter } = setup();
  state.queuedMs = 2 * REPORT_HOLD_MS - 0.1;
  reporter.report(finished(1), 'one\n');
  reporter.report(finished(2), 'two\n');
  assert.equal(sent.length, 0, 'nothing is sent before the turn ends');
  assert.equal(written(), '');
  timers.endTurn();
  assert.deepEqual(
    sent.map((r) => r.taskId),
    [1, 2],
  );
  assert.equal(written(), 'one\ntwo\n');
  assert.equal(timers.pendingHolds, 0);
});

test('with enough work queued, reports wait for the hold timer, in order', () => {
  const { sent, written, state, timers, reporter } = setup();
  state.queuedMs = 2 * REPORT_HOLD_MS;
  reporter.report(finished(1), 'one\n');
  reporter.report(finished(2), 'two\n');
  timers.endTurn();
  assert.equal(sent.length, 0, 'held while the executor has work queued');
  assert.equal(timers.held.length, 1, 'one timer for all the reports held');
  assert.equal(timers.held[0]?.ms, REPORT_HOLD_MS);
  timers.expire();
  assert.deepEqual(
    sent.map((r) => r.taskId),
    [1, 2],
  );
  assert.equal(written(), 'one\ntwo\n');
});

test('once the queue runs low, what is held goes out at the end of the turn and the timer is cancelled', () => {
  const { sent, state, timers, reporter } = setup();
  state.queuedMs = 100;
  reporter.report(finished(1));
  assert.equal(timers.pendingHolds, 1);
  state.queuedMs = 0;
  reporter.report(finished(2));
  assert.equal(timers.pendingHolds, 0, 'the hold timer is cancelled');
  timers.endTurn();
  assert.deepEqual(
    sent.map((r) => r.taskId),
    [1, 2],
  );
  timers.expire();
  assert.equal(sent.length, 2, 'nothing is sent twice');
});

test('a RUNNING report is left out when its task’s end goes in the same write; its line stays', () => {
  const { sent, written, state, timers, reporter } = setup();
  state.queuedMs = 0;
  reporter.report({ taskId: 1, state: 'RUNNING' }, 'run 1\n');
  timers.endTurn();
  timers.expire();
  // Task 1's RUNNING went out alone; task 2 starts and ends within one write.
  reporter.report({ taskId: 2, state: 'RUNNING' }, 'run 2\n');
  reporter.report(finished(1), 'end 1\n');
  reporter.report({ taskId: 3, state: 'RUNNING' }, 'run 3\n');
  reporter.report(finished(2), 'end 2\n');
  timers.endTurn();
  assert.deepEqual(
    sent.map((r) => `${r.taskId} ${r.state}`),
    ['1 RUNNING', '1 FINISHED', '3 RUNNING', '2 FINISHED'],
  );
  assert.equal(written(), 'run 1\nrun 2\nend 1\nrun 3\nend 2\n');
});

test('a RUNNING report alone waits for the hold timer, even with nothing queued; an end takes it along', () => {
  const { sent, written, state, timers, reporter } = setup();
  state.queuedMs = 0;
  reporter.report({ taskId: 1, state: 'RUNNING' }, 'run 1\n');
  timers.endTurn();
  assert.equal(sent.length, 0, 'the driver does not act on RUNNING: it waits for company');
  assert.equal(timers.pendingHolds, 1);
  assert.equal(timers.held[0]?.ms, REPORT_HOLD_MS);
  timers.expire();
  assert.deepEqual(
    sent.map((r) => `${r.taskId} ${r.state}`),
    ['1 RUNNING'],
  );
  // Another task starts; its end, with little queued, goes at the end of the turn, with the start.
  reporter.report({ taskId: 2, state: 'RUNNING' }, 'run 2\n');
  reporter.report({ taskId: 3, state: 'RUNNING' }, 'run 3\n');
  assert.equal(timers.pendingHolds, 1);
  reporter.report(finished(2), 'end 2\n');
  assert.equal(timers.pendingHolds, 0, 'the end cancels the hold');
  timers.endTurn();
  assert.deepEqual(
    sent.map((r) => `${r.taskId} ${r.state}`),
    ['1 RUNNING', '3 RUNNING', '2 FINISHED'],
  );
  assert.equal(written(), 'run 1\nrun 2\nrun 3\nend 2\n');
});

test('sendSoon sends what is held at the end of the turn however much work is queued', () => {
  const { sent, state, timers, reporter } = setup();
  state.queuedMs = 10 * REPORT_HOLD_MS;
  reporter.report({ taskId: 1, state: 'KILLED' });
  assert.equal(timers.pendingHolds, 1, 'held, as any end with work queued');
  reporter.sendSoon();
  assert.equal(timers.pendingHolds, 0, 'the hold is cancelled');
  assert.equal(sent.length, 0, 'nothing before the turn ends');
  timers.endTurn();
  assert.deepEqual(
    sent.map((r) => `${r.taskId} ${r.state}`),
    ['1 KILLED'],
  );
});

test('flush sends what is held at once; a send that throws does not stop the others', () => {
  const sent: number[] = [];
  const timers = new FakeTimers();
  const reporter = new StatusReporter(
    (r) => {
      if (r.taskId === 2) throw new Error('RpcEnv stopped');
      sent.push(r.taskId);
    },
    () => 1000,
    () => {},
    timers,
  );
  reporter.report(finished(1));
  reporter.report(finished(2));
  reporter.report(finished(3));
  reporter.flush();
  assert.deepEqual(sent, [1, 3]);
  assert.equal(timers.pendingHolds, 0);
  timers.expire();
  timers.endTurn();
  assert.deepEqual(sent, [1, 3]);
});

test('writeLines writes the lines held without sending their reports (the process is exiting)', () => {
  const { sent, written, state, reporter } = setup();
  state.queuedMs = 1000;
  reporter.report(finished(1), 'one\n');
  reporter.writeLines();
  assert.equal(written(), 'one\n');
  assert.equal(sent.length, 0);
  reporter.writeLines();
  assert.equal(written(), 'one\n', 'a line is written once');
});

test('reports go on the wire before their lines are written; a flush with nothing held does nothing', () => {
  const events: string[] = [];
  const timers = new FakeTimers();
  const reporter = new StatusReporter(
    (r) => events.push(`send ${r.taskId}`),
    () => 0,
    (text) => events.push(`write ${text.trim().replace('\n', ' ')}`),
    timers,
    () => events.push('flush'),
  );
  reporter.report(finished(1), 'one\n');
  reporter.report(finished(2), 'two\n');
  timers.endTurn();
  assert.deepEqual(events, ['send 1', 'send 2', 'flush', 'write one two']);
  events.length = 0;
  reporter.flush();
  assert.deepEqual(events, [], 'a flush with nothing held sent, flushed or wrote something');
});
