/**
 * The driver's listener bus: typed subscriptions, every subscriber in the order it subscribed,
 * events in the order they were posted (one posted by a subscriber included), and a subscriber
 * that throws logged without keeping the others, or the poster, from going on.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Value } from '@sinclair/typebox/value';
import { LiveListenerBus } from '../../../backend/app/driver/LiveListenerBus.js';
import {
  WickListenerEvent,
  type WickListenerExecutorRemoved,
  type WickListenerTaskEnd,
} from '../../../backend/protocol/listener.js';
import { setLogSink } from '../../../backend/util/log.js';

const taskEnd = (taskId: number): WickListenerTaskEnd => ({
  event: 'WickListenerTaskEnd',
  taskId,
  executorId: '0',
  state: 'FINISHED',
});
const removed: WickListenerExecutorRemoved = {
  event: 'WickListenerExecutorRemoved',
  executorId: '1',
  reason: 'Executor 1 disconnected',
  workerLost: false,
};

/** Runs `body` with the log's lines kept; returns them. */
function logged(body: () => void): string[] {
  const lines: string[] = [];
  const before = setLogSink((l) => void lines.push(l));
  try {
    body();
  } finally {
    setLogSink(before);
  }
  return lines;
}

test('a subscriber hears only the events it named, typed by them; onEvent hears all', () => {
  const bus = new LiveListenerBus();
  const ends: number[] = [];
  const all: string[] = [];
  bus.on('WickListenerTaskEnd', (e) => {
    ends.push(e.taskId);
    // @ts-expect-error: a task's end has no workerLost (the handler's type is the event named)
    void e.workerLost;
  });
  bus.on('WickListenerExecutorRemoved', (e) => assert.equal(e.workerLost, false));
  bus.onEvent((e) => all.push(e.event));
  bus.post(taskEnd(7));
  bus.post(removed);
  assert.deepEqual(ends, [7]);
  assert.deepEqual(all, ['WickListenerTaskEnd', 'WickListenerExecutorRemoved']);
});

test('subscribers hear an event in the order they subscribed; unsubscribed, they hear no more', () => {
  const bus = new LiveListenerBus();
  const heard: string[] = [];
  const offA = bus.on('WickListenerTaskEnd', (e) => heard.push(`a${e.taskId}`));
  bus.onEvent((e) => heard.push(`b${(e as WickListenerTaskEnd).taskId}`));
  bus.on('WickListenerTaskEnd', (e) => heard.push(`c${e.taskId}`));
  bus.post(taskEnd(1));
  offA();
  offA(); // twice is harmless
  bus.post(taskEnd(2));
  assert.deepEqual(heard, ['a1', 'b1', 'c1', 'b2', 'c2']);
  assert.equal(bus.size, 2);
});

test('an event posted by a subscriber is heard by everyone after the one being delivered', () => {
  const bus = new LiveListenerBus();
  const heard: string[] = [];
  bus.on('WickListenerTaskEnd', (e) => {
    heard.push(`first:${e.taskId}`);
    if (e.taskId === 1) bus.post(taskEnd(2));
  });
  bus.on('WickListenerTaskEnd', (e) => heard.push(`second:${e.taskId}`));
  bus.post(taskEnd(1));
  assert.deepEqual(heard, ['first:1', 'second:1', 'first:2', 'second:2']);
});

test('a subscriber that throws is logged with its error, and the others and the poster go on', () => {
  const bus = new LiveListenerBus();
  const heard: number[] = [];
  bus.on('WickListenerTaskEnd', (e) => heard.push(e.taskId));
  bus.on('WickListenerTaskEnd', () => {
    throw new Error('listener bug');
  });
  bus.on('WickListenerTaskEnd', (e) => heard.push(e.taskId * 10));
  const lines = logged(() => {
    bus.post(taskEnd(1));
    bus.post(taskEnd(2));
  });
  assert.deepEqual(heard, [1, 10, 2, 20], 'every other subscriber heard both, in order');
  assert.equal(lines.length, 2);
  assert.match(
    lines[0] as string,
    /ERROR LiveListenerBus: A listener of WickListenerTaskEnd threw an exception: Error: listener bug\n\s+at /,
  );
  // A throw inside a nested delivery does not stop the outer one either.
  const nested = new LiveListenerBus();
  const order: string[] = [];
  nested.on('WickListenerExecutorRemoved', () => {
    nested.post(taskEnd(3));
    throw new Error('after posting');
  });
  nested.on('WickListenerTaskEnd', (e) => order.push(`end ${e.taskId}`));
  nested.on('WickListenerExecutorRemoved', () => order.push('removed'));
  logged(() => nested.post(removed));
  assert.deepEqual(order, ['removed', 'end 3']);
});

test('the events are the protocol’s: each validates against WickListenerEvent, and a wrong one does not', () => {
  assert.ok(Value.Check(WickListenerEvent, taskEnd(1)));
  assert.ok(Value.Check(WickListenerEvent, removed));
  assert.ok(
    Value.Check(WickListenerEvent, {
      event: 'WickListenerWorkerRemoved',
      workerId: 'worker-20260101000000-10.0.0.1-7078',
      host: '10.0.0.1',
      message: 'Worker lost',
    }),
  );
  assert.equal(Value.Check(WickListenerEvent, { ...taskEnd(1), state: 'RUNNING' }), false);
  assert.equal(Value.Check(WickListenerEvent, { ...removed, extra: 1 }), false);
  assert.equal(Value.Check(WickListenerEvent, { ...removed, event: 'Nope' }), false);
});
