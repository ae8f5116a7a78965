import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { MasterState } from '../../../backend/agent/protocol.js';
import { memoryMiB, resourceProblem } from '../../../extension/submit/resourceCheck.js';

const worker = (memory: number, cores: number, state = 'ALIVE') => ({ memory, cores, state });
const state = (...workers: ReturnType<typeof worker>[]) => ({ workers }) as unknown as MasterState;

test('memory strings read as Spark reads them, in MiB; anything else is not a size', () => {
  assert.equal(memoryMiB('512m'), 512);
  assert.equal(memoryMiB('2G'), 2048);
  assert.equal(memoryMiB('1t'), 1024 * 1024);
  assert.equal(memoryMiB('2048'), 2048);
  assert.equal(memoryMiB('1024k'), 1);
  assert.equal(memoryMiB('lots'), undefined);
  assert.equal(memoryMiB('1.5g'), undefined);
});

test('500g against 2 GiB workers is named with both sizes', () => {
  assert.equal(
    resourceProblem({ executorMemory: '500g' }, state(worker(2048, 2), worker(1024, 4))),
    "500g is more than the largest worker's 2 GiB",
  );
});

test('too many cores per executor is named against the most any worker has', () => {
  assert.equal(
    resourceProblem(
      { executorMemory: '1g', executorCores: 8 },
      state(worker(4096, 2), worker(4096, 4)),
    ),
    "8 cores per executor is more than the largest worker's 4",
  );
});

test('what one alive worker could hold is no problem, however busy the cluster is', () => {
  assert.equal(
    resourceProblem({ executorMemory: '2g', executorCores: 4 }, state(worker(2048, 4))),
    undefined,
  );
  assert.equal(resourceProblem({}, state(worker(512, 1))), undefined);
});

test('dead workers do not count; with none alive there is nothing to compare with', () => {
  assert.equal(
    resourceProblem({ executorMemory: '4g' }, state(worker(8192, 8, 'DEAD'), worker(2048, 2))),
    "4g is more than the largest worker's 2 GiB",
  );
  assert.equal(
    resourceProblem({ executorMemory: '4g' }, state(worker(8192, 8, 'DEAD'))),
    undefined,
  );
  assert.equal(resourceProblem({ executorMemory: '4g' }, undefined), undefined);
});
