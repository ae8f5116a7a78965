import assert from 'node:assert/strict';
import { test } from 'node:test';
import { logsToClean } from '../../backend/history/cleaner.js';

const DAY = 86_400_000;
const now = 100 * DAY;

test('maxAge: every log older goes, whatever it is; younger ones stay', () => {
  const gone = logsToClean(
    [
      { name: 'old-done', mtimeMs: now - 8 * DAY, completed: true },
      { name: 'old-running', mtimeMs: now - 8 * DAY, completed: false },
      { name: 'old-bad', mtimeMs: now - 9 * DAY, completed: undefined },
      { name: 'young', mtimeMs: now - DAY, completed: true },
      { name: 'young-bad', mtimeMs: now - DAY, completed: undefined },
    ],
    now,
    7 * DAY,
    1000,
  );
  assert.deepEqual(gone, ['old-bad', 'old-done', 'old-running']);
});

test('maxNum: the oldest completed go first; running ones are never deleted for the count', () => {
  const logs = [
    { name: 'a', mtimeMs: now - 5, completed: true },
    { name: 'b', mtimeMs: now - 50, completed: false },
    { name: 'c', mtimeMs: now - 40, completed: true },
    { name: 'd', mtimeMs: now - 30, completed: true },
  ];
  assert.deepEqual(logsToClean(logs, now, 7 * DAY, 2), ['c', 'd']);
  // Only running logs left over the count: kept.
  assert.deepEqual(logsToClean(logs, now, 7 * DAY, 0), ['a', 'c', 'd']);
  assert.deepEqual(logsToClean(logs, now, 7 * DAY, 4), []);
});
