/**
 * `wick logs` through the master (wick.ui.reverseProxy=true, so that the master's LogRelay is
 * used although the worker could be reached): list, read and follow an executor's log of a real
 * worker process, and a relayed follow that ends when its client goes — leaving the worker with
 * no follow. (The choice of the relay for a worker that cannot be reached is
 * test/client/LogRouter.test.ts.)
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { wick } from '../helpers/cluster.js';
import { checkNothingLeftRunning } from '../helpers/leaks.js';
import {
  runExecutor,
  startLogCluster,
  testClientEnv,
  workerFollows,
} from '../helpers/logCluster.js';
import { waitFor } from '../helpers/processes.js';

checkNothingLeftRunning();

const WICK = fileURLToPath(new URL('../../bin/wick.js', import.meta.url));
const PROXY = ['--conf', 'wick.ui.reverseProxy=true'];

/** `wick logs -f` through the master, running; its output so far. */
function follow(t: TestContext, masterUrl: string, id: string) {
  const child = spawn(process.execPath, [WICK, 'logs', '-f', ...PROXY, '--master', masterUrl, id], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, WICK_MASTER: undefined },
  });
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const out = { stdout: '', stderr: '' };
  child.stdout.on('data', (d: Buffer) => {
    out.stdout += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    out.stderr += d.toString();
  });
  const closed = new Promise<number | null>((r) => child.once('close', (code) => r(code)));
  return { child, out, closed };
}

test('wick logs lists, reads and follows an ended executor’s logs through the master', {
  timeout: 60_000,
}, async (t) => {
  const { master, worker } = await startLogCluster(t);
  const { appId, state } = await runExecutor(
    t,
    master.url,
    "console.log('hello from the executor'); console.error('a warning')",
  );
  await state('EXITED');
  const through = new RegExp(
    `\\[wick logs\\] through the master at ${master.url.replace('wick://', '')}: wick\\.ui\\.reverseProxy is on`,
  );

  const list = await wick(['logs', ...PROXY, '--master', master.url, appId]);
  assert.equal(list.code, 0, list.stderr);
  // The master relaunches an executor that exits while its application runs: /0 is one line of several.
  assert.match(
    list.stdout,
    new RegExp(
      `^${appId}/0\\tEXITED\\t${worker.workerId}\\tstdout 24 B\\tstderr \\d+ B\\t\\(through the master\\)$`,
      'm',
    ),
  );

  const out = await wick(['logs', ...PROXY, '--master', master.url, `${appId}/0`]);
  assert.equal(out.code, 0, out.stderr);
  assert.equal(out.stdout, 'hello from the executor\n');
  assert.match(out.stderr, through);

  const err = await wick(['logs', ...PROXY, '--master', master.url, '--stderr', `${appId}/0`]);
  assert.equal(err.code, 0, err.stderr);
  assert.match(err.stdout, /a warning\n$/);

  const done = await wick(['logs', '-f', ...PROXY, '--master', master.url, `${appId}/0`]);
  assert.equal(done.code, 0, done.stderr);
  assert.equal(done.stdout, 'hello from the executor\n');
  assert.match(done.stderr, /\[wick logs\] process exited/);

  // The relay places the log with the master’s tables: one it does not know is said so (the
  // master relaunches the exiting executor, so the id must be far beyond any it reached).
  const unknown = await wick(['logs', ...PROXY, '--master', master.url, `${appId}/99999`]);
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, new RegExp(`No executor 99999 of ${appId}`));
});

test('a follow through the master sees appended lines until the executor exits', {
  timeout: 60_000,
}, async (t) => {
  const { master, worker } = await startLogCluster(t);
  const { appId, state } = await runExecutor(
    t,
    master.url,
    "console.log('start'); const fs = require('fs'); const i = setInterval(() => { if (fs.existsSync('go')) { clearInterval(i); console.log('end'); } }, 5)",
  );
  await state('RUNNING');
  const f = follow(t, master.url, `${appId}/0`);
  await waitFor('the first line', () => f.out.stdout.includes('start\n'), t.signal);
  writeFileSync(join(worker.workDir, appId, '0', 'go'), '');
  assert.equal(await f.closed, 0, f.out.stderr);
  assert.equal(f.out.stdout, 'start\nend\n');
  assert.match(f.out.stderr, /through the master/);
  assert.match(f.out.stderr, /\[wick logs\] process exited/);
});

test('a relayed follow ends on the worker when its client goes away', {
  timeout: 60_000,
}, async (t) => {
  const { master, worker } = await startLogCluster(t);
  // Prints a line each time a file `tick-N` appears, and runs until killed.
  const { appId, state } = await runExecutor(
    t,
    master.url,
    "console.log('start'); const fs = require('fs'); let n = 0; setInterval(() => { if (fs.existsSync('tick-' + n)) console.log('tick ' + n++); }, 5)",
  );
  await state('RUNNING');
  const env = await testClientEnv(t);
  assert.equal(await workerFollows(env, worker), 0);
  const f = follow(t, master.url, `${appId}/0`);
  await waitFor('the first line', () => f.out.stdout.includes('start\n'), t.signal);
  writeFileSync(join(worker.workDir, appId, '0', 'tick-0'), '');
  await waitFor('an appended line', () => f.out.stdout.includes('tick 0\n'), t.signal);
  // The worker serves the follow to the master, which relays it: one follow on the worker.
  assert.equal(await workerFollows(env, worker), 1);

  f.child.kill('SIGKILL');
  await f.closed;
  await waitFor(
    'the worker to stop the relayed follow',
    async () => (await workerFollows(env, worker)) === 0,
    t.signal,
  );
  // The follow ended, not the executor: it still runs and writes.
  writeFileSync(join(worker.workDir, appId, '0', 'tick-1'), '');
  const again = await wick(['logs', ...PROXY, '--master', master.url, `${appId}/0`]);
  assert.equal(again.code, 0, again.stderr);
  await waitFor(
    'the executor to go on',
    async () => {
      const r = await wick(['logs', ...PROXY, '--master', master.url, `${appId}/0`]);
      return r.stdout.includes('tick 1\n');
    },
    t.signal,
  );
  assert.equal(await workerFollows(env, worker), 0);
});
