/**
 * The worker's check of what LaunchExecutor hands an executor: its own addresses only, none that
 * another executor holds, and all or nothing.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CustomResources } from '../../../backend/worker/resources/CustomResources.js';

test('an executor takes addresses the worker has and nobody holds; others are refused by name', () => {
  const r = new CustomResources({ gpu: ['0', '1'] });
  assert.equal(r.take('app/0', { gpu: ['0'] }), undefined);
  assert.equal(r.take('app/1', { gpu: ['0'] }), 'gpu address 0 is held by executor app/0');
  assert.equal(
    r.take('app/1', { gpu: ['1', '5'] }),
    'this worker has no gpu address 5 (it has 0, 1)',
  );
  assert.deepEqual(r.used(), { gpu: ['0'] }, 'a refused launch holds nothing');
  assert.equal(
    r.take('app/1', { fpga: ['0'] }),
    'this worker has no fpga address 0 (it has no fpga)',
  );
  r.release('app/1', { gpu: ['0'] });
  assert.deepEqual(r.used(), { gpu: ['0'] }, 'only its holder frees an address');
  r.release('app/0', { gpu: ['0'] });
  assert.equal(r.take('app/1', { gpu: ['0', '1'] }), undefined);
  assert.deepEqual(r.used(), { gpu: ['0', '1'] });
});
