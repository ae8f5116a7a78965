/** The TaskScheduler's side of FetchFailed: the task set ends at once, keeping what finished. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  FetchFailedJobError,
  TaskScheduler,
} from '../../../backend/app/driver/scheduler/TaskScheduler.js';

test('a FetchFailed task ends its task set (no retry), kills the others, keeps the finished results', async () => {
  const s = new TaskScheduler(4);
  const { done } = s.submit({
    sources: [0, 1, 2].map((i) => ({ kind: 'array' as const, data: [i] })),
    transformations: [],
    action: { kind: 'collect' },
  });
  const placed = s.resourceOffers([{ executorId: 'a', freeCores: 3 }]);
  assert.equal(placed.length, 3);
  const [t0, t1, t2] = placed.map((p) => p.task.taskId) as [number, number, number];
  s.taskFinished(t0, ['zero']);
  const failed = s.taskFailed(t1, {
    name: 'FetchFailed',
    message: 'cannot fetch',
    fetchFailed: { shuffleId: 3, mapId: 1, executorId: 'b' },
  });
  assert.deepEqual(failed?.toKill, [{ taskId: t2, executorId: 'a' }]);
  const err = await done.then(
    () => assert.fail('the task set should fail'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof FetchFailedJobError);
  assert.deepEqual(err.fetchFailed, { shuffleId: 3, mapId: 1, executorId: 'b' });
  assert.deepEqual([...err.finished], [[0, ['zero']]]);
  assert.equal(s.hasPending, false, 'nothing is retried by the TaskScheduler');
});
