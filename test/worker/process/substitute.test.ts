import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatCommand, substituteVariables } from '../../../backend/worker/process/substitute.js';

test('every {{NAME}} in every argument is replaced by its value', () => {
  assert.deepEqual(
    substituteVariables(
      ['run', '--id={{EXECUTOR_ID}}', '{{APP_ID}}/{{EXECUTOR_ID}}', '{{HOSTNAME}}'],
      { EXECUTOR_ID: '7', APP_ID: 'app-1', HOSTNAME: 'h' },
    ),
    ['run', '--id=7', 'app-1/7', 'h'],
  );
});

test('unknown names, lower-case names and unbalanced braces are left as written', () => {
  assert.deepEqual(
    substituteVariables(['{{NOPE}}', '{{cores}}', '{{CORES}', '{CORES}}', '{{ CORES }}'], {
      CORES: '4',
    }),
    ['{{NOPE}}', '{{cores}}', '{{CORES}', '{CORES}}', '{{ CORES }}'],
  );
});

test('values are inserted literally, never substituted again or read as replacement patterns', () => {
  assert.deepEqual(substituteVariables(['{{A}}', '{{B}}'], { A: '{{B}}', B: "$& $1 $$ $'" }), [
    '{{B}}',
    "$& $1 $$ $'",
  ]);
});

test('the input is not modified', () => {
  const argv = ['{{X}}'];
  substituteVariables(argv, { X: 'y' });
  assert.deepEqual(argv, ['{{X}}']);
});

test('formatCommand quotes each argument as Spark prints a command', () => {
  assert.equal(formatCommand(['node', '-e', 'a b']), '"node" "-e" "a b"');
});
