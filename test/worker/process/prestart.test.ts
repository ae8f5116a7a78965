/**
 * The standby executor process (ExecutorPrestarter) with the real CLI: a launch of Wick's executor
 * command becomes the standby — same pid, the stderr header first, the executor's directory as its
 * cwd, the argv parsed by `wick executor` — while any other launch is left to a fresh spawn; a
 * standby dies with its worker, whether the worker stops or is SIGKILLed.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, type TestContext, test } from 'node:test';
import { killProcessTree } from '../../../backend/worker/process/kill.js';
import type { LaunchSpec } from '../../../backend/worker/process/launch.js';
import { ExecutorPrestarter } from '../../../backend/worker/process/prestart.js';
import {
  assertBuilt,
  killMarked,
  markedProcesses,
  startWick,
  waitUntilGone,
} from '../../helpers/cli.js';
import { isAlive, waitFor } from '../../helpers/processes.js';
import { CLI, executorSpec, silentDriver } from '../../helpers/standby.js';

before(assertBuilt);

function workDir(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'wick-prestart-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test("a Wick executor launch becomes the standby: its pid, the header first, the executor's cwd", async (t) => {
  const dir = workDir(t);
  const prestart = new ExecutorPrestarter(dir, [process.execPath, CLI], 2000);
  t.after(() => prestart.stop());
  prestart.fill();
  const standby = prestart.standbyPid;
  assert.ok(standby && isAlive(standby), 'a standby is running');
  // It waits in a folder that take() leaves in place: a task thread that starts before the
  // standby has moved to the executor's folder reads the working directory, and a removed one
  // (its own output folder, once) ended it with ENOENT.
  const waitsIn = readlinkSync(`/proc/${standby}/cwd`);

  const spec = executorSpec(dir, await silentDriver(t));
  const launched = prestart.take(spec);
  assert.ok(existsSync(waitsIn), `${waitsIn}, where the standby waited, is still there`);
  assert.ok(launched, 'the launch was served by the standby');
  t.after(() => killProcessTree(launched.pid, launched.marker, 2000));
  assert.equal(launched.pid, standby);
  assert.equal(prestart.standbyPid, undefined, 'a standby serves one launch');

  // `wick executor` runs with the argv: it logs the driver it connects to, in its own stderr.
  const stderr = join(spec.cwd, 'stderr');
  await waitFor(
    'the executor connecting to the driver',
    () => readFileSync(stderr, 'utf8').includes('Connecting to driver: wick://127.0.0.1:'),
    t.signal,
  );
  const text = readFileSync(stderr, 'utf8');
  assert.ok(text.startsWith(`${spec.header}\n${'='.repeat(40)}\n\n`), text);
  assert.equal(readlinkSync(`/proc/${launched.pid}/cwd`), spec.cwd);
  // `ps` shows the executor's command line, as for a fresh spawn.
  const cmdline = readFileSync(`/proc/${launched.pid}/cmdline`, 'utf8').replace(/\0+$/, '');
  assert.equal(cmdline, spec.argv.join(' '));
  assert.equal(readFileSync(join(spec.cwd, 'stdout'), 'utf8'), '');
  const prestartDir = join(dir, '.prestart');
  assert.deepEqual(
    existsSync(prestartDir) ? readdirSync(prestartDir) : [],
    [],
    'nothing left there',
  );

  await killProcessTree(launched.pid, launched.marker, 2000);
  // Ended as a freshly spawned executor ends: by its own SIGTERM handler (143), or by the signal
  // itself when a second SIGTERM of the tree kill (group, tree, marker) lands after the handler.
  const exit = await launched.exited;
  assert.ok(exit.exitCode === 143 || exit.signal === 'SIGTERM', JSON.stringify(exit));
});

test('other launches are spawned as usual and leave the standby in place', async (t) => {
  const dir = workDir(t);
  const prestart = new ExecutorPrestarter(dir, [process.execPath, CLI], 2000);
  t.after(() => prestart.stop());
  prestart.fill();
  const standby = prestart.standbyPid;
  const port = await silentDriver(t);
  const base = executorSpec(dir, port);
  const refused: [string, LaunchSpec][] = [
    ['NODE_OPTIONS in its environment', executorSpec(dir, port, { NODE_OPTIONS: '--no-warnings' })],
    ['another program', { ...base, argv: ['/bin/sh', '-c', 'exit 0'] }],
    [
      'another Wick',
      { ...base, argv: [process.execPath, '/elsewhere/wick.cjs', ...base.argv.slice(2)] },
    ],
    ['another command', { ...base, argv: [process.execPath, CLI, 'driver-wrapper'] }],
    ['an append (a driver relaunch)', { ...base, append: true }],
  ];
  for (const [what, spec] of refused) {
    assert.equal(prestart.take(spec), undefined, what);
    assert.equal(prestart.standbyPid, standby, `${what}: the standby stays`);
  }
});

test('stop() kills the standby and starts none after', async (t) => {
  const dir = workDir(t);
  const prestart = new ExecutorPrestarter(dir, [process.execPath, CLI], 2000);
  prestart.fill();
  const standby = prestart.standbyPid as number;
  await prestart.stop();
  assert.deepEqual(await waitUntilGone([standby], 10_000), []);
  prestart.fill();
  assert.equal(prestart.standbyPid, undefined);
});

test("a SIGKILLed worker's standby exits on its own (its stdin closes)", async (t) => {
  const dir = workDir(t);
  const mark = `prestart-${process.pid}-${Date.now()}`;
  t.after(() => killMarked(mark));
  // A worker whose master never answers: it keeps retrying, and starts its standby meanwhile.
  const w = startWick(
    ['worker', 'wick://127.0.0.1:1', '--host', '127.0.0.1', '--port', '0', '--work-dir', dir],
    { mark },
  );
  const standby = await waitFor(
    'the worker’s standby executor process',
    () => markedProcesses(mark).find((p) => / executor-standby( |$)/.test(p.cmdline)),
    t.signal,
  );
  process.kill(w.pid, 'SIGKILL');
  await w.exited;
  assert.deepEqual(await waitUntilGone([standby.pid], 20_000), [], 'the standby is gone');
  assert.deepEqual(markedProcesses(mark), []);
});
