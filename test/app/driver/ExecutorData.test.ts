/**
 * What the driver knows of an executor (backend/app/driver/ExecutorData.ts): cores and queue
 * slots taken by launches and given back by ends, and take-backs.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ExecutorData } from '../../../backend/app/driver/ExecutorData.js';
import type { RpcEndpointRef } from '../../../backend/rpc/index.js';

const ref = {} as RpcEndpointRef;

test('a launch takes a core or a queue slot; an end gives back a queue slot first', () => {
  const e = new ExecutorData('1', ref, '127.0.0.1:1', 'host', 2, 0);
  e.launched(10, false);
  e.launched(11, false);
  e.launched(12, true);
  assert.deepEqual([e.freeCores, e.queued], [0, 1]);
  // The queued task takes the core the first one held.
  assert.equal(e.ended(10, 5), true);
  assert.deepEqual([e.freeCores, e.queued, e.heardAt], [0, 0, 5]);
  assert.equal(e.ended(10, 6), false, 'an end reported twice frees nothing');
  assert.equal(e.heardAt, 5);
  assert.equal(e.ended(99, 7), false, 'nor does a task it never had');
  e.ended(11, 8);
  e.ended(12, 9);
  assert.deepEqual([e.freeCores, e.queued, e.holds(12)], [2, 0, false]);
});

test('asking back takes the last launched; each end answers it once', () => {
  const e = new ExecutorData('1', ref, '127.0.0.1:1', 'host', 1, 0);
  for (const id of [1, 2, 3, 4]) e.launched(id, id > 1);
  assert.deepEqual(e.askBack(2), [3, 4]);
  assert.equal(e.takingBack, 2);
  assert.equal(e.answeredAskBack(3), true);
  assert.equal(e.answeredAskBack(3), false);
  assert.equal(e.answeredAskBack(1), false, 'not asked back');
  assert.equal(e.takingBack, 1);
});
