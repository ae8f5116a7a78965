/**
 * WICK_EXECUTOR_DIRS as docs/protocol.md ("The executor's process") describes it, against the
 * worker that sets it and the executor that reads it: the dirs joined by the separator the page
 * names, and the executor's dir the first of them.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { test } from 'node:test';
import { appLocalDir } from '../../backend/app/executor/fetchAppFiles.js';
import { setLogLevel } from '../../backend/util/log.js';
import { ExecutorRunner } from '../../backend/worker/ExecutorRunner.js';

setLogLevel('WARN');

const doc = readFileSync(new URL('../../docs/protocol.md', import.meta.url), 'utf8');

/** The separator the page gives for this platform (this test runs where Wick's tests run). */
function documentedSeparator(): string {
  const m = /path-list separator[^)]*\): \*\*`(.)`\*\* on Linux and\s+macOS, `(.)` on Windows/.exec(
    doc,
  );
  assert.ok(m, 'docs/protocol.md no longer names the WICK_EXECUTOR_DIRS separator');
  return (process.platform === 'win32' ? m[2] : m[1]) as string;
}

test('the separator docs/protocol.md gives for WICK_EXECUTOR_DIRS is the one the worker joins with', async (t) => {
  const separator = documentedSeparator();
  assert.equal(separator, delimiter);
  const workDir = mkdtempSync(join(tmpdir(), 'wick-test-dirs-'));
  const dirs = ['/data1/wick-executor-app-1-a1B2c3', '/data2/wick-executor-app-1-d4E5f6'];
  const runner = new ExecutorRunner(
    'app-20261130120000-0000',
    0,
    {
      name: 'dirs',
      user: 'tester',
      memoryPerExecutorMB: 64,
      command: {
        argv: [process.execPath, '-e', 'console.log(process.env.WICK_EXECUTOR_DIRS)'],
        env: {},
      },
    },
    1,
    64,
    {
      host: '127.0.0.1',
      workerUrl: 'wick://127.0.0.1:40000/Worker',
      webUiUrl: 'http://127.0.0.1:8081',
      killTimeoutMs: 2000,
    },
    workDir,
    dirs,
    () => {},
  );
  t.after(async () => {
    await runner.kill();
    rmSync(workDir, { recursive: true, force: true });
  });
  await runner.start();
  await runner.finished;
  const printed = readFileSync(join(runner.dir, 'stdout'), 'utf8').trim();
  assert.deepEqual(printed.split(separator), dirs);
  // The executor's own dir is the first, as the page says.
  assert.equal(appLocalDir({ WICK_EXECUTOR_DIRS: printed }), dirs[0]);
  assert.equal(appLocalDir({}), process.cwd());
});
