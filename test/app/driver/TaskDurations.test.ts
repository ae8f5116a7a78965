import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TaskDurations } from '../../../backend/app/driver/TaskDurations.js';

test('a running average per job, from its first finished task until it ends', () => {
  const d = new TaskDurations();
  assert.equal(d.shortest(), Number.POSITIVE_INFINITY);
  d.note(1, 10);
  d.note(1, 20);
  d.note(2, 4);
  assert.deepEqual(
    [...d.entries()],
    [
      [1, 12],
      [2, 4],
    ],
  );
  assert.equal(d.shortest(), 4);
  d.jobEnded(2);
  assert.equal(d.size, 1);
  assert.equal(d.shortest(), 12);
});
