import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock, systemClock } from '../../backend/util/clock.js';

test('ManualClock starts where it is told and only moves on advance', () => {
  const clock = new ManualClock(500);
  assert.equal(clock.now(), 500);
  clock.advance(0);
  assert.equal(clock.now(), 500);
  clock.advance(250);
  assert.equal(clock.now(), 750);
  assert.equal(new ManualClock().now(), 0);
});

test('ManualClock fires due timers in order of due time, ties in order of creation, each at its own time', () => {
  const clock = new ManualClock(0);
  const fired: string[] = [];
  const at = (label: string) => () => fired.push(`${label}@${clock.now()}`);
  clock.setTimeout(at('c'), 30);
  clock.setTimeout(at('a'), 10);
  clock.setTimeout(at('b1'), 20);
  clock.setTimeout(at('b2'), 20);
  clock.setTimeout(at('late'), 31);
  clock.advance(30);
  assert.deepEqual(fired, ['a@10', 'b1@20', 'b2@20', 'c@30']);
  assert.equal(clock.now(), 30);
  assert.equal(clock.pendingTimers(), 1);
  clock.advance(1);
  assert.equal(fired.at(-1), 'late@31');
  assert.equal(clock.pendingTimers(), 0);
});

test('ManualClock fires a timer only once', () => {
  const clock = new ManualClock();
  let count = 0;
  clock.setTimeout(() => count++, 5);
  clock.advance(5);
  clock.advance(100);
  assert.equal(count, 1);
});

test('a cancelled ManualClock timer never fires, and cancelling one leaves the others', () => {
  const clock = new ManualClock();
  const fired: string[] = [];
  const a = clock.setTimeout(() => fired.push('a'), 10);
  clock.setTimeout(() => fired.push('b'), 10);
  a.cancel();
  assert.equal(clock.pendingTimers(), 1);
  clock.advance(10);
  assert.deepEqual(fired, ['b']);
  a.cancel();
  assert.deepEqual(fired, ['b'], 'cancelling again is harmless');
});

test('a timer can cancel a later one that is due in the same advance', () => {
  const clock = new ManualClock();
  const fired: string[] = [];
  let later: { cancel(): void } | undefined;
  clock.setTimeout(() => {
    fired.push('first');
    later?.cancel();
  }, 1);
  later = clock.setTimeout(() => fired.push('later'), 2);
  clock.advance(5);
  assert.deepEqual(fired, ['first']);
});

test('a timer set from a callback is relative to that callback time and fires in the same advance when due', () => {
  const clock = new ManualClock(0);
  const fired: string[] = [];
  clock.setTimeout(() => {
    fired.push(`outer@${clock.now()}`);
    clock.setTimeout(() => fired.push(`inner@${clock.now()}`), 5);
    clock.setTimeout(() => fired.push(`beyond@${clock.now()}`), 50);
  }, 10);
  clock.advance(20);
  assert.deepEqual(fired, ['outer@10', 'inner@15']);
  assert.equal(clock.pendingTimers(), 1);
  clock.advance(40);
  assert.deepEqual(fired, ['outer@10', 'inner@15', 'beyond@60']);
});

test('a zero or negative delay fires on the next advance, even advance(0)', () => {
  const clock = new ManualClock(100);
  const fired: number[] = [];
  clock.setTimeout(() => fired.push(clock.now()), 0);
  clock.setTimeout(() => fired.push(clock.now()), -5);
  assert.deepEqual(fired, [], 'never synchronously');
  clock.advance(0);
  assert.deepEqual(fired, [100, 100]);
});

test('systemClock: now() is wall-clock time and a cancelled timer never runs', async () => {
  const before = Date.now();
  const now = systemClock.now();
  assert.ok(now >= before && now <= Date.now());
  let ran = false;
  const handle = systemClock.setTimeout(() => {
    ran = true;
  }, 0);
  handle.cancel();
  // A 0 ms timer set after the cancelled one fires after it would have (this one is ref'd, so
  // the process waits for it, whereas systemClock's timers are unref'd).
  await new Promise<void>((r) => setTimeout(r, 0));
  assert.equal(ran, false);
});
