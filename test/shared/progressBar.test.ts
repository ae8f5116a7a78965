import assert from 'node:assert/strict';
import { test } from 'node:test';
import { renderProgressBar } from '../../backend/shared/progressBar.js';

const stage = (stageId: number, numTasks: number, done: number, active: number) => ({
  stageId,
  numTasks,
  numCompletedTasks: done,
  numActiveTasks: active,
});

test("Spark's segment: header, a bar of = and >, then (done + active) / total, in the width", () => {
  for (const w of [30, 50, 80])
    assert.equal(renderProgressBar([stage(3, 400, 120, 4)], w).length, w);
  assert.equal(
    renderProgressBar([stage(3, 400, 120, 4)], 50),
    '[Stage 3:=======>                 (120 + 4) / 400]',
  );
  assert.equal(renderProgressBar([stage(0, 4, 0, 2)], 30), '[Stage 0:>        (0 + 2) / 4]');
  assert.equal(renderProgressBar([stage(0, 4, 4, 0)], 30), '[Stage 0:=========(4 + 0) / 4]');
});

test('stages share the width, at most three; a width too small keeps the numbers', () => {
  const three = renderProgressBar(
    [stage(1, 10, 5, 1), stage(2, 10, 0, 1), stage(3, 10, 10, 0)],
    90,
  );
  assert.equal(three.length, 90);
  assert.deepEqual(three.match(/\[Stage \d/g), ['[Stage 1', '[Stage 2', '[Stage 3']);
  const four = renderProgressBar(
    [stage(1, 1, 0, 1), stage(2, 1, 0, 1), stage(3, 1, 0, 1), stage(4, 1, 0, 1)],
    90,
  );
  assert.doesNotMatch(four, /Stage 4/);
  assert.equal(renderProgressBar([stage(12, 1000, 1, 2)], 10), '[Stage 12:(1 + 2) / 1000]');
  assert.equal(renderProgressBar([], 80), '');
});
