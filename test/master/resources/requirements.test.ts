/**
 * Resources in the pure scheduler: an executor goes only where its resources are free, the
 * scheduler counts them down across executors and apps, and the waiting reason names what is
 * missing.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { executorsAllowed } from '../../../backend/master/resources/requirements.js';
import { schedule, waitingReason } from '../../../backend/master/scheduling.js';

const gpu = (amount: number) => [{ resourceName: 'gpu', amount }];

test('executors allowed by free amounts: the scarcest resource decides', () => {
  assert.equal(executorsAllowed(undefined, undefined), Number.POSITIVE_INFINITY);
  assert.equal(executorsAllowed({ gpu: 3 }, gpu(1)), 3);
  assert.equal(
    executorsAllowed({ gpu: 3, fpga: 1 }, [...gpu(1), { resourceName: 'fpga', amount: 1 }]),
    1,
  );
  assert.equal(executorsAllowed({}, gpu(1)), 0);
});

test('an app needing a gpu gets executors only on workers with one free, one per gpu', () => {
  for (const spreadOut of [true, false]) {
    const result = schedule({
      drivers: [],
      apps: [
        {
          id: 'a',
          coresLeft: 16,
          memoryPerExecutorMB: 1,
          coresPerExecutor: 1,
          resourceReqsPerExecutor: gpu(1),
        },
      ],
      workers: [
        { id: 'no-gpu', coresFree: 8, memoryFree: 1000 },
        { id: 'two-gpus', coresFree: 4, memoryFree: 1000, resourcesFree: { gpu: 2 } },
        { id: 'busy-gpu', coresFree: 8, memoryFree: 1000, resourcesFree: { gpu: 0 } },
      ],
      spreadOut,
    });
    assert.deepEqual(
      result.executors.map((e) => e.workerId),
      ['two-gpus', 'two-gpus'],
      `spreadOut ${spreadOut}`,
    );
  }
});

test('two apps share a worker’s gpus without both counting the same one', () => {
  const result = schedule({
    drivers: [],
    apps: [
      { id: 'a', coresLeft: 1, memoryPerExecutorMB: 1, resourceReqsPerExecutor: gpu(2) },
      {
        id: 'b',
        coresLeft: 4,
        memoryPerExecutorMB: 1,
        coresPerExecutor: 1,
        resourceReqsPerExecutor: gpu(1),
      },
    ],
    workers: [{ id: 'w', coresFree: 8, memoryFree: 1000, resourcesFree: { gpu: 3 } }],
    spreadOut: true,
  });
  assert.deepEqual(
    result.executors.map((e) => [e.appId, e.workerId]),
    [
      ['a', 'w'],
      ['b', 'w'],
    ],
  );
});

test('the waiting reason names a resource no worker has, then one none has free', () => {
  const app = { id: 'a', coresLeft: 1, memoryPerExecutorMB: 1, resourceReqsPerExecutor: gpu(1) };
  const plain = { id: 'w', coresFree: 4, memoryFree: 100 };
  const reason = waitingReason(
    app,
    [plain],
    () => 100,
    () => undefined,
  );
  assert.match(reason ?? '', /asks for 1 gpu but no alive worker has 1 gpu/);
  assert.match(reason ?? '', /wick\.worker\.resource\.gpu\.amount/);
  const busy = { ...plain, resourcesFree: { gpu: 0 } };
  assert.match(
    waitingReason(
      app,
      [busy],
      () => 100,
      () => ({ gpu: 1 }),
    ) ?? '',
    /no worker has 1 gpu free now/,
  );
  const free = { ...plain, resourcesFree: { gpu: 1 } };
  assert.equal(
    waitingReason(
      app,
      [free],
      () => 100,
      () => ({ gpu: 1 }),
    ),
    undefined,
  );
});
