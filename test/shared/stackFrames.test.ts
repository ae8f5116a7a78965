/** Reading stacks as text, and picking the first frame in the user's code (AppFailure.location). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  collapseWickFrames,
  firstUserFrame,
  parseStackFrames,
} from '../../backend/shared/stackFrames.js';

const wick = { dirs: ['/opt/wick/dist', '/opt/wick/backend'] };

test('frames with and without a name, async ones and file: URLs are read; other lines are not', () => {
  const frames = parseStackFrames(
    [
      'Error: bad value 3',
      '    at /home/u/throws.ts:7:11',
      '    at wick-task-pipeline.js:6:5',
      '    at async runOne (/opt/wick/dist/task-worker.cjs:550:32)',
      '    at Object.<anonymous> (file:///home/u/my%20app/main.ts:3:1)',
      '    at new Thing (node:internal/modules/run_main:123:5)',
      '    at eval (eval at <anonymous> (/a.js:1:1), <anonymous>:1:1)',
      'not a frame: /home/u/x.ts:1:1',
    ].join('\n'),
  );
  assert.deepEqual(frames.slice(0, 5), [
    { file: '/home/u/throws.ts', line: 7, column: 11 },
    { file: 'wick-task-pipeline.js', line: 6, column: 5 },
    { name: 'async runOne', file: '/opt/wick/dist/task-worker.cjs', line: 550, column: 32 },
    { name: 'Object.<anonymous>', file: '/home/u/my app/main.ts', line: 3, column: 1 },
    { name: 'new Thing', file: 'node:internal/modules/run_main', line: 123, column: 5 },
  ]);
});

test("the first user frame skips node:internal, node_modules, Wick's own code and compiled copies", () => {
  const stack = [
    'JobFailedError: Job aborted: Lost task 1.3 (TID 4, executor 1): Error: bad value 3',
    '    at node:internal/process/task_queues:95:5',
    '    at wick-task-pipeline.js:6:5',
    '    at /home/u/proj/node_modules/lodash/map.js:10:3',
    '    at /tmp/wick-executor-app-1-Ab/code-f0/throws.mjs:3:22',
    '    at /tmp/wick-submit-123-xy/throws.mjs:3:22',
    '    at TaskScheduler.abort (/opt/wick/dist/cli/main.cjs:57390:20)',
    '    at /opt/wick/backend/app/task/runTask.ts:200:1',
    '    at square (/home/u/proj/throws.ts:7:11)',
    '    at /home/u/proj/other.ts:1:1',
  ].join('\n');
  assert.deepEqual(firstUserFrame(stack, wick), {
    file: '/home/u/proj/throws.ts',
    line: 7,
    column: 11,
  });
});

test('no user frame at all: no location (rather than a wrong one)', () => {
  assert.equal(
    firstUserFrame('Error: x\n    at /opt/wick/dist/wick.cjs:1:1\n    at node:fs:1:1', wick),
    undefined,
  );
  assert.equal(firstUserFrame('', wick), undefined);
  // A folder whose name only starts like Wick's is the user's.
  assert.deepEqual(firstUserFrame('    at /opt/wick/distant/a.ts:2:3', wick), {
    file: '/opt/wick/distant/a.ts',
    line: 2,
    column: 3,
  });
});

test("a user's stack: each run of Wick's frames becomes one line, the user's and Node's stay", () => {
  const not = { dirs: ['/opt/wick/dist'] };
  const text = [
    'Error: task failed on purpose',
    '    at /home/u/app/job.ts:8:11',
    '    at GO.abort (/opt/wick/dist/cli/main.cjs:248:19)',
    '    at Xk.handle (/opt/wick/dist/cli/main.cjs:101:7)',
    '    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)',
    '    at async main (/home/u/app/job.ts:12:3)',
    '    at Object.run (/opt/wick/dist/cli/main.cjs:9:1)',
  ].join('\n');
  assert.equal(
    collapseWickFrames(text, not),
    [
      'Error: task failed on purpose',
      '    at /home/u/app/job.ts:8:11',
      '    … 2 frames in Wick (WICK_DEBUG=1 shows them)',
      '    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)',
      '    at async main (/home/u/app/job.ts:12:3)',
      '    … 1 frame in Wick (WICK_DEBUG=1 shows them)',
    ].join('\n'),
  );
  // The user's first frame is still found in what is printed.
  assert.deepEqual(firstUserFrame(collapseWickFrames(text, not), not), {
    file: '/home/u/app/job.ts',
    line: 8,
    column: 11,
  });
  // A folder that merely starts like Wick's is not Wick's.
  const near = '    at f (/opt/wick/dist2/x.js:1:1)';
  assert.equal(collapseWickFrames(near, not), near);
});
