import assert from 'node:assert/strict';
import { mock, test } from 'node:test';
import { debounce } from '../../extension/tree/debounce.js';

test('a burst of calls runs fn once, ms after the last call', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const fn = mock.fn();
  const d = debounce(fn, 100);
  d();
  t.mock.timers.tick(60);
  d();
  t.mock.timers.tick(99);
  assert.equal(fn.mock.callCount(), 0);
  t.mock.timers.tick(1);
  assert.equal(fn.mock.callCount(), 1);
  t.mock.timers.tick(1_000);
  assert.equal(fn.mock.callCount(), 1);
});

test('flushed() resolves at once when nothing is pending', async () => {
  const d = debounce(() => {}, 100);
  let settled = false;
  await d.flushed().then(() => {
    settled = true;
  });
  assert.ok(settled);
});

test('flushed() waits for the pending call, even one a later call postponed', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const order: string[] = [];
  const d = debounce(() => order.push('fn'), 100);
  d();
  const flushed = d.flushed().then(() => order.push('flushed'));
  t.mock.timers.tick(50);
  d();
  t.mock.timers.tick(99);
  await Promise.resolve();
  assert.deepEqual(order, []);
  t.mock.timers.tick(1);
  await flushed;
  assert.deepEqual(order, ['fn', 'flushed']);
});

test('flushed() resolves after dispose, and fn never runs', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const fn = mock.fn();
  const d = debounce(fn, 10);
  d();
  const flushed = d.flushed();
  d.dispose();
  await flushed;
  t.mock.timers.tick(100);
  assert.equal(fn.mock.callCount(), 0);
});
