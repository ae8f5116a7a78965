import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { test } from 'node:test';

/**
 * scripts/testRunner.mjs: a file's bound is the longest timeout its own tests ask for, so the
 * runner's default does not cut it short; a file that asks nothing is stopped at the default; the
 * whole run is one report with one summary.
 */
const root = resolve(import.meta.dirname, '../..');
const fixtures = join(root, 'test/fixtures/testRunner');

test('each file gets the timeout its tests ask for, the default bounds the rest, one summary', {
  timeout: 60_000,
}, async () => {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      join(root, 'scripts/testRunner.mjs'),
      join(fixtures, 'asksLonger.test.ts'),
      join(fixtures, 'hangs.test.ts'),
    ],
    // Without NODE_TEST_CONTEXT (this file's runner), or run() would take itself for a nested run.
    {
      cwd: root,
      env: { ...process.env, NODE_TEST_CONTEXT: undefined, WICK_TEST_FILE_TIMEOUT_MS: '2000' },
    },
  );
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    out += d;
  });
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    out += d;
  });
  const started = Date.now();
  const code = await new Promise<number | null>((r) => child.once('close', r));
  const took = Date.now() - started;

  assert.equal(code, 1, `a cancelled file fails the run:\n${out}`);
  assert.match(out, /✔ asks for 20 s and takes 3 s/, out);
  assert.match(out, /hangs\.test\.ts[\s\S]*timed out after 2000ms/, out);
  // One summary for the run, counting both files.
  assert.equal(out.match(/ℹ tests \d+/g)?.length, 1, out);
  assert.match(out, /ℹ tests 2\n/);
  assert.match(out, /ℹ pass 1\n/);
  assert.match(out, /ℹ cancelled 1\n/);
  // The hanging file did not run its minute, and the long one its 3 s (side by side).
  assert.ok(took < 30_000, `the run took ${took} ms`);
});
