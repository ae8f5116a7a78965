/**
 * The pure part of log rolling: Spark's rolled file names and their order, which files go past
 * maxRetainedFiles, and the mapping of an offset over the whole log onto its files (Spark's
 * Utils.offsetBytes over several files, counted from the first byte ever written).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseRollingInterval } from '../../backend/conf/executorLogs.js';
import {
  clampRange,
  filesToDelete,
  nextRolloverTime,
  rolledSuffix,
  sortRolledOver,
  spansOf,
} from '../../backend/logs/rolledFiles.js';

test("rolled names carry the time as Spark's patterns write it", () => {
  const at = new Date(2026, 11, 7, 3, 9, 4, 56).getTime();
  assert.equal(rolledSuffix(at, 'day'), '--2026-12-07');
  assert.equal(rolledSuffix(at, 'hour'), '--2026-12-07--03');
  assert.equal(rolledSuffix(at, 'minute'), '--2026-12-07--03-09');
  assert.equal(rolledSuffix(at, 'second'), '--2026-12-07--03-09-04');
  assert.equal(rolledSuffix(at, 'millisecond'), '--2026-12-07--03-09-04--0056');
});

test('the time interval: daily, hourly, minutely or seconds (at least 60), else a clear error', () => {
  assert.deepEqual(parseRollingInterval('daily'), { intervalMs: 86_400_000, pattern: 'day' });
  assert.deepEqual(parseRollingInterval('Hourly'), { intervalMs: 3_600_000, pattern: 'hour' });
  assert.deepEqual(parseRollingInterval('minutely'), { intervalMs: 60_000, pattern: 'minute' });
  assert.deepEqual(parseRollingInterval('90'), { intervalMs: 90_000, pattern: 'second' });
  for (const bad of ['59', 'weekly', '', '1.5', '-60']) {
    assert.throws(() => parseRollingInterval(bad), /expected daily, hourly, minutely or a number/);
  }
  // The next multiple of the interval, strictly after now (Spark's calculateNextRolloverTime).
  assert.equal(nextRolloverTime(120_000, 60_000), 180_000);
  assert.equal(nextRolloverTime(120_001, 60_000), 180_000);
});

test('rolled files sort oldest first, by name without .gz; a file both ways counts once', () => {
  const names = [
    'stdout',
    'stderr--2026-12-07--00-00-01--0000',
    'stdout--2026-12-07--00-00-02--0000.gz',
    'stdout--2026-12-07--00-00-01--0500',
    'stdout--2026-12-07--00-00-01--0500--0',
    'stdout--2026-12-07--00-00-03--0000',
    'stdout--2026-12-07--00-00-03--0000.gz',
    '.stdout--2026-12-07--00-00-04--0000.gz.tmp',
    '.stdout-removed-bytes',
    'stdoutx',
  ];
  assert.deepEqual(sortRolledOver(names, 'stdout'), [
    'stdout--2026-12-07--00-00-01--0500',
    'stdout--2026-12-07--00-00-01--0500--0',
    'stdout--2026-12-07--00-00-02--0000.gz',
    'stdout--2026-12-07--00-00-03--0000',
  ]);
  assert.deepEqual(sortRolledOver(names, 'stderr'), ['stderr--2026-12-07--00-00-01--0000']);
});

test('maxRetainedFiles keeps the newest; 0 or less keeps all', () => {
  const rolled = ['a1', 'a2', 'a3', 'a4'];
  assert.deepEqual(filesToDelete(rolled, 2), ['a1', 'a2']);
  assert.deepEqual(filesToDelete(rolled, 4), []);
  assert.deepEqual(filesToDelete(rolled, 9), []);
  assert.deepEqual(filesToDelete(rolled, 0), []);
  assert.deepEqual(filesToDelete(rolled, -1), []);
});

test('an offset range over the whole log maps onto the files that hold it', () => {
  // 100 bytes deleted, then files of 10, 0, 5 and 20 bytes: offsets 100-110, 110-115, 115-135.
  const sizes = [10, 0, 5, 20];
  assert.deepEqual(spansOf(100, sizes, 100, 135), [
    { index: 0, from: 0, length: 10 },
    { index: 2, from: 0, length: 5 },
    { index: 3, from: 0, length: 20 },
  ]);
  assert.deepEqual(spansOf(100, sizes, 108, 112), [
    { index: 0, from: 8, length: 2 },
    { index: 2, from: 0, length: 2 },
  ]);
  assert.deepEqual(spansOf(100, sizes, 120, 121), [{ index: 3, from: 5, length: 1 }]);
  assert.deepEqual(spansOf(100, sizes, 135, 200), []);
  assert.deepEqual(spansOf(0, [], 0, 10), []);
  // Every byte of a range, exactly once, in order, whatever the cut.
  const total = 35;
  for (let start = 100; start <= 100 + total; start++) {
    for (let end = start; end <= 100 + total; end++) {
      const spans = spansOf(100, sizes, start, end);
      assert.equal(
        spans.reduce((n, s) => n + s.length, 0),
        end - start,
        `${start}-${end}`,
      );
    }
  }
});

test('a read is clamped to what is kept; without an offset it is the last bytes', () => {
  assert.deepEqual(clampRange(100, 135, undefined, 10), { start: 125, end: 135 });
  assert.deepEqual(clampRange(100, 135, undefined, 1000), { start: 100, end: 135 });
  // Below what is kept (deleted bytes): from the first byte kept.
  assert.deepEqual(clampRange(100, 135, 0, 10), { start: 100, end: 110 });
  assert.deepEqual(clampRange(100, 135, 130, 10), { start: 130, end: 135 });
  assert.deepEqual(clampRange(100, 135, 500, 10), { start: 135, end: 135 });
  assert.deepEqual(clampRange(0, 0, 0, 10), { start: 0, end: 0 });
});
