/** The event timeline's scale: spans to x, running bars to now, ticks on round steps. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bar, niceStep, timeScale } from '../../../webview/status/timelineLayout.js';

test('the scale covers every span, a running one until now', () => {
  const s = timeScale([{ start: 1000, end: 2000 }, { start: 1500 }], 3000, 200);
  assert.deepEqual([s.start, s.end], [1000, 3000]);
  assert.equal(s.x(1000), 0);
  assert.equal(s.x(2000), 100);
  assert.equal(s.x(3000), 200);
  assert.equal(s.x(0), 0, 'clamped to the span');
  assert.deepEqual(bar(s, { start: 1500 }, 3000), { x: 50, width: 150 });
  assert.deepEqual(
    bar(s, { start: 2000, end: 2000 }, 3000),
    { x: 100, width: 2 },
    'at least 2 wide',
  );
});

test('ticks fall on 1, 2 or 5 × a power of ten', () => {
  assert.deepEqual([niceStep(0.3), niceStep(3), niceStep(130), niceStep(4000)], [1, 5, 200, 5000]);
  const s = timeScale([{ start: 0, end: 10_000 }], 10_000, 100, 5);
  assert.deepEqual(
    s.ticks.map((t) => t.t),
    [0, 2000, 4000, 6000, 8000, 10_000],
  );
});

test('nothing at all, or one instant: a one-second span at now', () => {
  const s = timeScale([], 5000, 100);
  assert.deepEqual([s.start, s.end], [5000, 6000]);
  const one = timeScale([{ start: 7000, end: 7000 }], 7000, 100);
  assert.deepEqual([one.start, one.end], [7000, 8000]);
});
