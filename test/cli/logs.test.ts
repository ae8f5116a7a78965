/**
 * `wick logs` against a real cluster (a `wick master` and a `wick worker` process; the bundle must
 * be built): the master says which worker ran the executor, the worker serves its stdout or
 * stderr, and -f follows a running executor until it exits.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  type MasterProcess,
  startMaster,
  startWorker,
  type WorkerProcess,
  wick,
} from '../helpers/cluster.js';
import { checkNothingLeftRunning } from '../helpers/leaks.js';
import { runExecutor } from '../helpers/logCluster.js';
import { waitFor } from '../helpers/processes.js';

const WICK = fileURLToPath(new URL('../../bin/wick.js', import.meta.url));

let shared: Promise<{ master: MasterProcess; worker: WorkerProcess }> | undefined;

/** One master and one worker for the whole file: each daemon takes ~0.6 s to start. */
function cluster() {
  shared ??= (async () => {
    const master = await startMaster(undefined);
    const worker = await startWorker(undefined, master.url, { cores: 1 });
    await master.waitForStderr(/Registering worker/);
    return { master, worker };
  })();
  return shared;
}

after(async () => {
  if (!shared) return;
  const { master, worker } = await shared;
  await worker.stop();
  await master.stop();
  rmSync(worker.workDir, { recursive: true, force: true });
});
checkNothingLeftRunning();

test('wick logs prints an executor’s stdout, or its stderr with --stderr', async (t) => {
  const { master } = await cluster();
  const { appId, state } = await runExecutor(
    t,
    master.url,
    "console.log('hello from the executor'); console.error('a warning')",
  );
  await state('EXITED');

  const out = await wick(['logs', '--master', master.url, `${appId}/0`]);
  assert.equal(out.code, 0, out.stderr);
  assert.equal(out.stdout, 'hello from the executor\n');

  const err = await wick(['logs', '--master', master.url, '--stderr', `${appId}/0`]);
  assert.equal(err.code, 0, err.stderr);
  assert.match(err.stdout, /^Wick Executor Command: .*\n={40}\n\na warning\n$/s);

  // -f on a process that has ended prints what there is and stops.
  const done = await wick(['logs', '-f', '--master', master.url, `${appId}/0`]);
  assert.equal(done.code, 0, done.stderr);
  assert.equal(done.stdout, 'hello from the executor\n');
  assert.match(done.stderr, /\[wick logs\] process exited/);
});

test('wick logs -f follows a running executor until it exits', async (t) => {
  const { master, worker } = await cluster();
  const { appId, state } = await runExecutor(
    t,
    master.url,
    "console.log('start'); const fs = require('fs'); const i = setInterval(() => { if (fs.existsSync('go')) { clearInterval(i); console.log('end'); } }, 5)",
  );
  await state('RUNNING');
  const child = spawn(
    process.execPath,
    [WICK, 'logs', '-f', '--master', master.url, `${appId}/0`],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, WICK_MASTER: undefined },
    },
  );
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise<number | null>((r) => child.once('close', (code) => r(code)));
  await waitFor('the first line', () => stdout.includes('start\n'), t.signal);
  // Only now does the executor write its last line and exit: the follow has to see it.
  const dir = join(worker.workDir, appId, '0');
  assert.ok(existsSync(dir));
  writeFileSync(join(dir, 'go'), '');
  assert.equal(await exited, 0, stderr);
  assert.equal(stdout, 'start\nend\n');
  assert.match(stderr, /\[wick logs\] process exited/);
});

test('wick logs for an application the master does not know says so', async () => {
  const { master } = await cluster();
  const r = await wick(['logs', '--master', master.url, 'app-20261130120000-0999/0']);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /The master knows no application app-20261130120000-0999/);
});
