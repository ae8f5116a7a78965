import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  answerLines,
  firstLine,
  firstUserFrame,
  lastLine,
  lastWickError,
  stackFrames,
  syntaxProblems,
} from '../../../extension/output/parseOutput.js';

// As the driver prints an aborted job today: the executor's stack, in the bundle and in Wick.
const aborted = `26/12/03 08:43:50 WARN DriverEndpoint: Lost task 3 on executor 0: boom
wick: Job aborted due to stage failure: Task 0 in stage 0.0 failed 4 times: Error: task failed on purpose at 1
    at /tmp/wick-executor-app-1-gR2Cuy/code-62e2/throws-in-task.mjs:3:9
    at wick-task-pipeline.js:7:5
    at /opt/wick/dist/task-worker.cjs:248:16
    at runTask (/opt/wick/dist/task-worker.cjs:182:20)
    at async runOne (/opt/wick/dist/task-worker.cjs:536:32)
    at async onMessage (/opt/wick/node_modules/piscina/dist/worker.js:180:22)
`;

test('stack frames: named, anonymous, async, file URLs; native and eval frames are left out', () => {
  const text = [
    'Error: x',
    '    at boom (/home/u/app/throws.ts:7:11)',
    '    at /home/u/app/main.ts:3:1',
    '    at async Promise.all (index 0)',
    '    at new Thing (file:///home/u/app/thing.mjs:12:5)',
    '    at Array.map (<anonymous>)',
    '    at node:internal/modules/esm/module_job:195:25',
    'not a frame at /x.ts:1:1',
  ].join('\n');
  assert.deepEqual(stackFrames(text), [
    { file: '/home/u/app/throws.ts', line: 7, column: 11 },
    { file: '/home/u/app/main.ts', line: 3, column: 1 },
    { file: '/home/u/app/thing.mjs', line: 12, column: 5 },
    { file: 'node:internal/modules/esm/module_job', line: 195, column: 25 },
  ]);
});

test("the first user frame skips Node's, dependencies' and what `accept` refuses", () => {
  assert.deepEqual(firstUserFrame(aborted), {
    file: '/tmp/wick-executor-app-1-gR2Cuy/code-62e2/throws-in-task.mjs',
    line: 3,
    column: 9,
  });
  // The workspace is /home/u/app: the bundle under /tmp and Wick's dist are not the user's.
  assert.equal(
    firstUserFrame(aborted, (f) => f.startsWith('/home/u/app/')),
    undefined,
  );
  const mapped = aborted.replace(
    '/tmp/wick-executor-app-1-gR2Cuy/code-62e2/throws-in-task.mjs:3:9',
    '/home/u/app/throws-in-task.ts:8:11',
  );
  assert.deepEqual(
    firstUserFrame(mapped, (f) => f.startsWith('/home/u/app/')),
    { file: '/home/u/app/throws-in-task.ts', line: 8, column: 11 },
  );
  assert.equal(
    firstUserFrame('    at x (/a/node_modules/p/i.js:1:1)\n    at node:fs:3:4'),
    undefined,
  );
});

test("the driver's last `wick:` line is the error", () => {
  assert.match(lastWickError(aborted) ?? '', /^Job aborted due to stage failure: .*task failed/);
  assert.equal(
    lastWickError('wick: first\nINFO x\nwick: TypeError: second\n'),
    'TypeError: second',
  );
  assert.equal(lastWickError('no such line\n'), undefined);
});

test("syntax errors in esbuild's one-line form and in wick's older form, files made absolute", () => {
  const text = [
    '/home/u/app/bad.ts:4:12: error: Expected ")" but found ";"',
    '✘ [ERROR] lib/util.ts:2:0: ERROR: Unexpected "}"',
    'wick: Syntax error in bad.ts:1:13: Expected ")" but found ";"',
    'wick: Job aborted: x.ts:1:2: error: not a syntax line',
    'plain text: 1:2: error: not a location',
  ].join('\n');
  assert.deepEqual(syntaxProblems(text, '/home/u/app'), [
    { file: '/home/u/app/bad.ts', line: 4, column: 12, message: 'Expected ")" but found ";"' },
    { file: '/home/u/app/lib/util.ts', line: 2, column: 1, message: 'Unexpected "}"' },
    { file: '/home/u/app/bad.ts', line: 1, column: 13, message: 'Expected ")" but found ";"' },
  ]);
  assert.deepEqual(syntaxProblems(aborted, '/home/u/app'), []);
});

test('lines too long to be a frame or an error line are not read as one', () => {
  const long = `    at f (/a/${'x'.repeat(10_000)}.ts:1:1)`;
  assert.deepEqual(stackFrames(long), []);
});

test('first and last lines', () => {
  assert.equal(firstLine('Error: a\n    at b'), 'Error: a');
  assert.equal(lastLine('a\nb  \n\n  \n'), 'b');
  assert.equal(lastLine('\n\n'), undefined);
});

test("a run's answer: the application's last lines, without Wick's log lines or progress frames", () => {
  const text = [
    '26/12/07 00:10:01 INFO StandaloneAppClient: Connecting to master',
    'Counted 3 words',
    '[Stage 0:>     (0 + 2) / 2]\r[Stage 0:=====>(1 + 1) / 2]\r',
    'Pi is roughly 3.14159',
    '26/12/07 00:10:02 INFO WickContext: Stopped',
    '',
  ].join('\n');
  assert.deepEqual(answerLines(text), ['Counted 3 words', 'Pi is roughly 3.14159']);
  assert.deepEqual(answerLines(text, 1), ['Pi is roughly 3.14159']);
  assert.deepEqual(answerLines('26/12/07 00:10:02 INFO X: y\n'), []);
  // A line longer than the budget is cut, never dropped; earlier lines stop at the budget.
  const long = 'x'.repeat(500);
  assert.deepEqual(answerLines(`first\n${long}\n`), [`${'x'.repeat(299)}…`]);
  assert.deepEqual(answerLines(`${'a'.repeat(200)}\n${'b'.repeat(150)}\n`), ['b'.repeat(150)]);
});
