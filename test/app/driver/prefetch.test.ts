/**
 * The prefetch policy on its own (backend/app/driver/prefetch.ts): queue sizes from task
 * durations, which executors get queue slots, a refill's first write, and the end-of-job
 * take-back. No RpcEnv: executors are plain records.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  type ExecutorProgress,
  firstWriteSize,
  PREFETCH_PER_CORE,
  PREFETCH_QUEUE_MS,
  queuePerCore,
  queueSlots,
  TAKE_BACK_MIN_MS,
  takeBack,
} from '../../../backend/app/driver/prefetch.js';

function executor(
  id: string,
  fields: Partial<Omit<ExecutorProgress, 'id'>> = {},
): ExecutorProgress {
  return { id, cores: 1, freeCores: 0, queued: 0, heardAt: 0, takingBack: 0, ...fields };
}

test('a queue holds PREFETCH_QUEUE_MS of work per core, at most PREFETCH_PER_CORE tasks', () => {
  assert.equal(queuePerCore(10), PREFETCH_QUEUE_MS / 10);
  assert.equal(queuePerCore(0.01), PREFETCH_PER_CORE, 'very short tasks: the cap');
  assert.equal(queuePerCore(PREFETCH_QUEUE_MS), 1);
  assert.equal(queuePerCore(PREFETCH_QUEUE_MS + 1), 0, 'longer tasks: placed one per free core');
});

test('queue slots go to executors whose cores are all busy and whose queue is at least half free, emptiest first', () => {
  // 10 ms tasks: 30 per core; a refill needs at least 15 free per core.
  const slots = queueSlots(
    [
      executor('idle', { freeCores: 1 }),
      executor('half', { queued: 15 }),
      executor('full', { queued: 16 }),
      executor('empty', { cores: 2 }),
    ],
    10,
  );
  assert.deepEqual(slots, [
    { executorId: 'empty', freeCores: 60 },
    { executorId: 'half', freeCores: 15 },
  ]);
  assert.deepEqual(queueSlots([executor('a')], PREFETCH_QUEUE_MS + 1), [], 'long tasks: none');
});

test('a refill writes FIRST_WRITE_MS of work per core at once', () => {
  assert.equal(firstWriteSize(2, 1), 20);
  assert.equal(firstWriteSize(1, 3), 4);
  assert.equal(firstWriteSize(4, 50), 4, 'at least a task per core');
});

test('take-back: the busiest executor gives an idle one its share of what it has queued', () => {
  // One idle core, a donor of one core with 9 queued: half of them even the two out.
  assert.deepEqual(
    takeBack([executor('idle', { freeCores: 1 }), executor('busy', { queued: 9 })], 10, 0),
    { donorId: 'busy', count: 4 },
  );
  // The donor is the one with the most queued now, by its cores' progress since it was heard.
  assert.deepEqual(
    takeBack(
      [
        executor('idle', { freeCores: 1 }),
        executor('heardLongAgo', { queued: 20, heardAt: 0 }),
        executor('heardNow', { queued: 12, heardAt: 100 }),
      ],
      10,
      100,
    ),
    { donorId: 'heardNow', count: 6 },
  );
});

test('no take-back without an idle core, without a donor, for less than a task or than TAKE_BACK_MIN_MS of work, or while one is unanswered', () => {
  assert.equal(
    takeBack([executor('a', { queued: 9 }), executor('b', { queued: 9 })], 10, 0),
    undefined,
  );
  assert.equal(takeBack([executor('idle', { freeCores: 1 }), executor('b')], 10, 0), undefined);
  assert.equal(
    takeBack([executor('idle', { freeCores: 1 }), executor('b', { queued: 1 })], 10, 0),
    undefined,
    'half of one task is none',
  );
  // Four tasks of 0.05 ms: less work than the round trips of moving it.
  assert.equal(
    takeBack([executor('idle', { freeCores: 1 }), executor('b', { queued: 9 })], 0.05, 0),
    undefined,
    `less than TAKE_BACK_MIN_MS (${TAKE_BACK_MIN_MS} ms) of work stays where it is`,
  );
  assert.deepEqual(
    takeBack([executor('idle', { freeCores: 1 }), executor('b', { queued: 9 })], 0.5, 0),
    { donorId: 'b', count: 4 },
  );
  assert.equal(
    takeBack(
      [executor('idle', { freeCores: 1 }), executor('b', { queued: 9, takingBack: 2 })],
      10,
      0,
    ),
    undefined,
  );
});
