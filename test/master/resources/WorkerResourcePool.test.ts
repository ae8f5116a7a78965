/**
 * The master's pure allocation of a worker's custom resources: first free addresses, never one
 * address to two holders, freed on release, and recovered holds that do not fit refused.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { WorkerResourcePool } from '../../../backend/master/resources/WorkerResourcePool.js';

const gpu = (amount: number) => [{ resourceName: 'gpu', amount }];

test('executors get the first free addresses, and no address twice', () => {
  const pool = new WorkerResourcePool({ gpu: ['0', '1', '2'], fpga: ['a'] });
  const first = pool.pick(gpu(2));
  assert.deepEqual(first, { gpu: ['0', '1'] });
  assert.deepEqual(pool.acquire(first ?? {}), {});
  const second = pool.pick(gpu(2));
  assert.equal(second, undefined, 'only one gpu is left');
  assert.deepEqual(pool.pick(gpu(1)), { gpu: ['2'] });
  // The same address again is refused and stays held once.
  assert.deepEqual(pool.acquire({ gpu: ['1'] }), { gpu: ['1'] });
  assert.deepEqual(pool.used(), { gpu: ['0', '1'], fpga: [] });
  assert.deepEqual(pool.freeAmounts(), { gpu: 1, fpga: 1 });
  pool.release({ gpu: ['0'] });
  assert.deepEqual(pool.freeAddresses(), { gpu: ['0', '2'], fpga: ['a'] });
  assert.deepEqual(pool.pick([...gpu(1), { resourceName: 'fpga', amount: 1 }]), {
    gpu: ['0'],
    fpga: ['a'],
  });
});

test('a resource the worker lacks is never picked, and acquiring it is refused', () => {
  const pool = new WorkerResourcePool({ gpu: ['0'] });
  assert.equal(pool.pick([{ resourceName: 'fpga', amount: 1 }]), undefined);
  assert.deepEqual(pool.acquire({ fpga: ['0'], gpu: ['9', '0'] }), { fpga: ['0'], gpu: ['9'] });
  assert.deepEqual(pool.used(), { gpu: ['0'] });
  assert.equal(new WorkerResourcePool().isEmpty, true);
  assert.deepEqual(new WorkerResourcePool().pick(undefined), {});
});
