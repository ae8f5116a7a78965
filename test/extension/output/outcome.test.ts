import assert from 'node:assert/strict';
import { test } from 'node:test';
import { failureOf, outcome, type RunFacts } from '../../../extension/output/outcome.js';

const inWorkspace = (f: string) => f.startsWith('/home/u/app/');
const base: RunFacts = {
  file: '/home/u/app/throws.ts',
  deployMode: 'client',
  text: '',
  accept: inWorkspace,
};

test('a finished app that exited 0 is a success; a killed one is not a failure', () => {
  const ok = outcome({ ...base, exitCode: 0, appState: 'FINISHED', appName: 'Pi' });
  assert.deepEqual(ok, { failed: false, message: 'Pi finished', problems: [] });
  const said = outcome({ ...base, exitCode: 0, appState: 'FINISHED', text: 'Pi is roughly 3.1\n' });
  assert.deepEqual(said.answer, ['Pi is roughly 3.1']);
  const killed = outcome({ ...base, exitCode: 1, appState: 'KILLED', appName: 'Pi' });
  assert.equal(killed.failed, false);
  assert.equal(killed.message, 'Pi was killed');
});

test("the master's failure wins: its first line, its location, one Problems entry there", () => {
  const o = outcome({
    ...base,
    exitCode: 1,
    appState: 'FAILED',
    appName: 'Throws',
    text: 'wick: something else\n',
    failure: {
      message: 'Error: task failed on purpose\n    at x',
      location: { file: '/home/u/app/throws.ts', line: 7, column: 11 },
    },
  });
  assert.equal(o.failed, true);
  assert.equal(o.message, 'Throws failed: Error: task failed on purpose');
  assert.deepEqual(o.location, { file: '/home/u/app/throws.ts', line: 7, column: 11 });
  assert.deepEqual(o.problems, [
    {
      file: '/home/u/app/throws.ts',
      line: 7,
      column: 11,
      message: 'Error: task failed on purpose',
    },
  ]);
});

test('without a failure from the master: the exit code, the `wick:` line, the first user frame', () => {
  const text = [
    'INFO a',
    'wick: TypeError: top-level failure',
    '    at boom (/home/u/app/throws.ts:3:9)',
    '    at /home/u/app/throws.ts:5:1',
  ].join('\n');
  const o = outcome({ ...base, exitCode: 1, appState: 'FINISHED', text });
  assert.equal(o.failed, true);
  assert.equal(o.message, 'throws.ts failed: TypeError: top-level failure');
  assert.deepEqual(o.location, { file: '/home/u/app/throws.ts', line: 3, column: 9 });
});

test('a stack that points only into the bundle: the entry names the submitted file, line 1', () => {
  const o = outcome({
    ...base,
    exitCode: 1,
    text: 'wick: Job aborted: Error: x\n    at /tmp/wick-executor-1/code/throws.mjs:3:9\n',
  });
  assert.equal(o.location, undefined);
  assert.deepEqual(o.problems, [
    {
      file: '/home/u/app/throws.ts',
      line: 1,
      column: 1,
      message: 'Job aborted: Error: x (no line of throws.ts in the stack)',
    },
  ]);
});

test('a syntax error at submit: the submit failed, an entry per error line, Go to Source at the first', () => {
  const o = outcome({
    ...base,
    file: '/home/u/app/bad.ts',
    exitCode: 1,
    submitFailed: true,
    text: 'wick: Syntax error in bad.ts:2:13: Expected ")" but found ";"\n',
  });
  assert.equal(o.failed, true);
  assert.equal(
    o.message,
    'Submitting bad.ts failed: Syntax error in bad.ts:2:13: Expected ")" but found ";"',
  );
  assert.deepEqual(o.problems, [
    { file: '/home/u/app/bad.ts', line: 2, column: 13, message: 'Expected ")" but found ";"' },
  ]);
  assert.deepEqual(o.location, o.problems[0]);
});

test('cluster mode: the driver state decides; exit codes are not known there', () => {
  const failed = outcome({
    ...base,
    deployMode: 'cluster',
    driverState: 'FAILED',
    driverException: 'Error: exited 1\nmore',
  });
  assert.equal(failed.failed, true);
  assert.equal(failed.message, 'throws.ts failed: Error: exited 1');
  assert.equal(outcome({ ...base, deployMode: 'cluster', driverState: 'FINISHED' }).failed, false);
});

test('a signal-ended driver with nothing said is reported as such', () => {
  assert.equal(
    outcome({ ...base, exitCode: null }).message,
    'throws.ts failed: the driver was ended by a signal',
  );
});

test('failureOf checks what crossed the wire', () => {
  assert.equal(failureOf({}), undefined);
  assert.equal(failureOf({ failure: { message: 3 } }), undefined);
  assert.deepEqual(
    failureOf({ failure: { message: 'm', location: { file: 'f', line: 0, column: 1 } } }),
    {
      message: 'm',
    },
  );
  assert.deepEqual(
    failureOf({
      failure: {
        message: 'x'.repeat(5000),
        stack: 's',
        location: { file: '/f', line: 2, column: 0 },
      },
    }),
    { message: 'x'.repeat(4096), stack: 's', location: { file: '/f', line: 2, column: 1 } },
  );
});

test('a failed task crosses checked, and the outcome keeps it for Debug Failed Task', () => {
  assert.deepEqual(failureOf({ failure: { message: 'm', task: { stageId: 3, partitionId: 2 } } }), {
    message: 'm',
    task: { stageId: 3, partitionId: 2 },
  });
  for (const task of [
    { stageId: 3 },
    { stageId: -1, partitionId: 2 },
    { stageId: 1, partitionId: 2.5 },
    'p2',
  ])
    assert.equal(
      failureOf({ failure: { message: 'm', task } })?.task,
      undefined,
      JSON.stringify(task),
    );
});
