/**
 * Tasks' custom resources on one executor: whole addresses each, or shares of one; no more tasks
 * than they allow; freed when a task ends.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ExecutorData } from '../../../backend/app/driver/ExecutorData.js';
import { TaskResourceSlots } from '../../../backend/app/driver/TaskResourceSlots.js';
import { taskResourceRequests } from '../../../backend/conf/resources.js';
import { WickConf } from '../../../backend/conf/WickConf.js';
import type { RpcEndpointRef } from '../../../backend/rpc/index.js';

test('one gpu per task: two tasks on two gpus, the third waits until one ends', () => {
  const slots = new TaskResourceSlots({ gpu: ['0', '1'] }, [
    { resourceName: 'gpu', amount: 1, parts: 1 },
  ]);
  assert.equal(slots.available(), 2);
  assert.deepEqual(slots.assign(1), { gpu: ['0'] });
  assert.deepEqual(slots.assign(2), { gpu: ['1'] });
  assert.equal(slots.available(), 0);
  assert.equal(slots.assign(3), undefined);
  slots.release(1);
  assert.deepEqual(slots.assign(3), { gpu: ['0'] });
  assert.deepEqual(slots.of(2), { gpu: ['1'] });
});

test('a quarter of a gpu per task: four tasks share each address', () => {
  const reqs = taskResourceRequests(
    new WickConf({
      'spark.executor.resource.gpu.amount': '1',
      'spark.task.resource.gpu.amount': '0.25',
    }),
  );
  assert.deepEqual(reqs, [{ resourceName: 'gpu', amount: 1, parts: 4 }]);
  const slots = new TaskResourceSlots({ gpu: ['7'] }, reqs);
  for (let t = 0; t < 4; t++) assert.deepEqual(slots.assign(t), { gpu: ['7'] });
  assert.equal(slots.available(), 0);
});

test('task amounts that cannot work are refused naming the key', () => {
  const bad: [Record<string, string>, RegExp][] = [
    [{ 'wick.task.resource.gpu.amount': '1' }, /set wick\.executor\.resource\.gpu\.amount too/],
    [
      { 'wick.executor.resource.gpu.amount': '1', 'wick.task.resource.gpu.amount': '2' },
      /each task asks for 2 gpu but each executor gets 1/,
    ],
    [
      { 'wick.executor.resource.gpu.amount': '1', 'wick.task.resource.gpu.amount': '0.7' },
      /'0\.7' is not a task's amount/,
    ],
  ];
  for (const [settings, expected] of bad) {
    assert.throws(
      () => taskResourceRequests(new WickConf(settings)),
      (err: Error) => {
        assert.match(err.message, /Invalid value for wick\.task\.resource\.gpu\.amount/);
        assert.match(err.message, expected);
        return true;
      },
    );
  }
});

test('an executor with 4 cores and 2 gpus offers 2 tasks at a time, each with its own gpu', () => {
  const e = new ExecutorData('1', {} as RpcEndpointRef, '127.0.0.1:1', 'host', 4, 0);
  e.taskResources = new TaskResourceSlots({ gpu: ['0', '1'] }, [
    { resourceName: 'gpu', amount: 1, parts: 1 },
  ]);
  assert.equal(e.freeCores, 2, 'the gpus, not the cores, decide');
  e.launched(10, false);
  e.launched(11, false);
  assert.equal(e.freeCores, 0);
  assert.deepEqual(
    [e.taskResources.of(10), e.taskResources.of(11)],
    [{ gpu: ['0'] }, { gpu: ['1'] }],
  );
  assert.equal(e.ended(10, 1), true);
  assert.equal(e.freeCores, 1);
  e.launched(12, false);
  assert.deepEqual(e.taskResources.of(12), { gpu: ['0'] }, 'the freed gpu goes to the next task');
});
