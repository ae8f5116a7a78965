/** What a failing driver reports (AppFailure) and prints: name and message, stack, the user's line. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeFailure, formatFailure } from '../../../backend/app/driver/appFailure.js';
import { JobFailedError } from '../../../backend/app/driver/scheduler/TaskScheduler.js';

const wick = { dirs: ['/opt/wick/dist'] };

/** An error with a stack of our choosing, as a job's abort carries its task's stack in the message. */
function errorWith(name: string, message: string, frames: string[]): Error {
  const err = new Error(message);
  err.name = name;
  err.stack = `${name}: ${message}\n${frames.map((f) => `    at ${f}`).join('\n')}`;
  return err;
}

test("an aborted job's failure points at the task's throw, before the driver's own frames", () => {
  const err = errorWith(
    'JobFailedError',
    'Job aborted due to stage failure: Lost task 1.3 (TID 4, executor 1): Error: bad value 3\n    at /home/u/throws.ts:15:24\n    at wick-task-pipeline.js:6:5',
    ['TaskScheduler.abort (/opt/wick/dist/cli/main.cjs:57416:20)', 'main (/home/u/throws.ts:18:3)'],
  );
  const f = describeFailure(err, wick);
  assert.match(f.message, /^JobFailedError: Job aborted due to stage failure/);
  assert.deepEqual(f.location, { file: '/home/u/throws.ts', line: 15, column: 24 });
  assert.equal(f.stack, err.stack);
});

test("a driver's own throw points at its first frame in the user's code", () => {
  const err = errorWith('RangeError', 'need at least 10 slices, got 3', [
    'check (/home/u/app.ts:7:11)',
    '<anonymous> (/home/u/app.ts:10:1)',
    'ModuleJob.run (node:internal/modules/esm/module_job:325:25)',
  ]);
  const f = describeFailure(err, wick);
  assert.equal(f.message, 'RangeError: need at least 10 slices, got 3');
  assert.deepEqual(f.location, { file: '/home/u/app.ts', line: 7, column: 11 });
  assert.equal(
    formatFailure(err),
    'RangeError: need at least 10 slices, got 3\n    at check (/home/u/app.ts:7:11)\n    at <anonymous> (/home/u/app.ts:10:1)\n    at ModuleJob.run (node:internal/modules/esm/module_job:325:25)',
  );
});

test('what is thrown need not be an Error; a long message and stack are cut to their bounds', () => {
  assert.deepEqual(describeFailure('oops', wick), { message: 'Uncaught "oops"' });
  assert.equal(formatFailure(42), 'Uncaught 42');
  const long = errorWith(
    'Error',
    'x'.repeat(10_000),
    Array(2000).fill('f (/opt/wick/dist/a.js:1:1)'),
  );
  const f = describeFailure(long, wick);
  assert.equal(f.message.length, 4096);
  assert.ok(f.message.endsWith('…'));
  assert.equal(f.stack?.length, 16 * 1024);
  assert.equal(f.location, undefined, "no frame in the user's code");
});

test("a stack that does not begin with the name and message gets them, as Node's would", () => {
  const err = new TypeError('bad');
  err.stack = '    at f (/home/u/a.ts:1:2)';
  assert.equal(formatFailure(err), 'TypeError: bad\n    at f (/home/u/a.ts:1:2)');
});

test("a job's failure names the task that failed it, its own or its cause's; others name none", () => {
  const job = new JobFailedError('Job aborted due to stage failure: Task 2 in stage 5.0 failed', {
    stageId: 5,
    partitionId: 2,
  });
  assert.deepEqual(describeFailure(job, wick).task, { stageId: 5, partitionId: 2 });
  const wrapped = new Error('the report failed', { cause: job });
  assert.deepEqual(describeFailure(wrapped, wick).task, { stageId: 5, partitionId: 2 });
  assert.equal(describeFailure(new Error('plain'), wick).task, undefined);
  assert.equal(describeFailure(new JobFailedError('fetch failures'), wick).task, undefined);
});
