/** WorkerResources: what a worker offers, what its executors and drivers hold of it. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { WorkerResources } from '../../backend/worker/WorkerResources.js';

test('reserve and release move used and free together', () => {
  const r = new WorkerResources(4, 2048);
  assert.deepEqual([r.coresUsed, r.memoryUsed, r.coresFree, r.memoryFree], [0, 0, 4, 2048]);
  r.reserve(3, 1024);
  r.reserve(1, 512);
  assert.deepEqual([r.coresUsed, r.memoryUsed, r.coresFree, r.memoryFree], [4, 1536, 0, 512]);
  r.release(3, 1024);
  assert.deepEqual([r.coresUsed, r.memoryUsed, r.coresFree, r.memoryFree], [1, 512, 3, 1536]);
});

test("a reservation past what is free is the master's decision, not refused", () => {
  const r = new WorkerResources(1, 128);
  r.reserve(2, 256);
  assert.equal(r.coresFree, -1);
  assert.equal(r.memoryFree, -128);
});

test('releasing more than is held, or a bad amount, is refused naming the values', () => {
  const r = new WorkerResources(4, 2048);
  r.reserve(1, 100);
  assert.throws(
    () => r.release(2, 100),
    /Cannot release 2 cores and 100 MiB: only 1 cores and 100 MiB are in use/,
  );
  assert.throws(
    () => r.reserve(-1, 0),
    /Cannot reserve -1 cores and 0 MiB: expected whole numbers/,
  );
  assert.throws(() => r.reserve(1.5, 0), /expected whole numbers of at least 0/);
  assert.deepEqual([r.coresUsed, r.memoryUsed], [1, 100], 'unchanged by the refusals');
});
