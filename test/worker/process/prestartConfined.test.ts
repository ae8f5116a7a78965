/**
 * The confined standby (ExecutorPrestarter in a confining worker) with real bwrap and the built
 * CLI: started before anyone knows whose executor it becomes, with dirs of its own only; its local
 * dirs become the first application's that asks (renamed on the host, seen where they were), its
 * dir the executor's; and then it sees what a freshly confined executor sees — its own dirs, not
 * the work dir's others, not the secret's folder — read here through /proc/<pid>/root, its mount
 * namespace. A standby handed to one application serves no other launch.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { before, type TestContext, test } from 'node:test';
import { killProcessTree, markedPids } from '../../../backend/worker/process/kill.js';
import {
  confinedLaunchLine,
  ExecutorPrestarter,
  sandboxStarted,
} from '../../../backend/worker/process/prestart.js';
import { chooseSandbox } from '../../../backend/worker/sandbox/Sandbox.js';
import { assertBuilt, waitUntilGone } from '../../helpers/cli.js';
import { isAlive, waitFor } from '../../helpers/processes.js';
import { CLI, executorSpec, silentDriver } from '../../helpers/standby.js';

before(assertBuilt);

/** What a worker's driver asks for: Wick's executor, named as on the driver's host. */
const COMMAND = { argv: ['{{WICK_NODE}}', '{{WICK_CLI}}', 'executor'], env: {} };

function confinedPrestarter(t: TestContext) {
  const dir = mkdtempSync(join(tmpdir(), 'wick-prestart-confined-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const localRoot = join(dir, 'local');
  const secretDir = join(dir, 'config');
  mkdirSync(secretDir);
  writeFileSync(join(secretDir, 'cluster-secret'), 'not for applications');
  // Another application's executor dir, beside the one to come.
  mkdirSync(join(dir, 'app-other', '0'), { recursive: true });
  writeFileSync(join(dir, 'app-other', '0', 'stdout'), 'theirs');
  const { sandbox } = chooseSandbox('bwrap', {
    workDir: dir,
    localDirRoots: [localRoot],
    secretDirs: [secretDir],
    secretFiles: [],
    extraReadOnly: [],
  });
  assert.ok(sandbox);
  const prestart = new ExecutorPrestarter(dir, [process.execPath, CLI], 2000, 1, undefined, {
    sandbox,
    localDirRoots: [localRoot],
  });
  t.after(() => prestart.stop());
  return { dir, localRoot, secretDir, prestart };
}

test("a confined standby becomes an application's first executor, seeing its own dirs only", {
  timeout: 120_000,
}, async (t) => {
  const { dir, localRoot, secretDir, prestart } = confinedPrestarter(t);
  prestart.fill();
  const standby = prestart.standbyPid;
  assert.ok(standby && isAlive(standby));
  await waitFor('its sandbox running', () => sandboxStarted(standby), t.signal);
  const [ownLocal] = readdirSync(localRoot);
  assert.match(ownLocal ?? '', /^wick-executor-standby\./);

  const handed = prestart.handOverLocalDirs('app-test', COMMAND);
  assert.ok(handed && handed.length === 1, 'its local dirs become the application’s');
  assert.match(handed[0] as string, /\/local\/wick-executor-app-test-[A-Za-z0-9]{6}$/);
  assert.deepEqual(readdirSync(localRoot), [handed[0]?.split('/').pop()]);

  const spec = executorSpec(dir, await silentDriver(t), {
    WICK_EXECUTOR_DIRS: handed[0] as string,
  });
  const launched = prestart.take(spec);
  assert.ok(launched, 'the launch was served by the standby');
  t.after(() =>
    killProcessTree(launched.pid, launched.marker, 2000, false, undefined, { sandboxed: true }),
  );
  assert.equal(launched.pid, standby);
  assert.equal(launched.sandboxed, true);
  const stderr = join(spec.cwd, 'stderr');
  await waitFor(
    'the executor connecting to the driver',
    () => readFileSync(stderr, 'utf8').includes('Connecting to driver: wick://127.0.0.1:'),
    t.signal,
  );
  assert.ok(readFileSync(stderr, 'utf8').startsWith(`${spec.header}\n${'='.repeat(40)}\n\n`));

  // Node inside the sandbox (bwrap and its namespace's init carry the marker too).
  const inner = (await markedPids(launched.marker)).filter(
    (pid) =>
      basename(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] ?? '') !== 'bwrap',
  );
  assert.equal(inner.length, 1, `one Node inside: ${inner}`);
  const root = `/proc/${inner[0]}/root`;
  // Of the work dir: where its own dir was at its start, and the local dirs' root; nothing else.
  assert.deepEqual(readdirSync(root + dir).sort(), ['.prestart', 'local']);
  const seenOwn = readdirSync(`${root}${dir}/.prestart`);
  assert.equal(seenOwn.length, 1);
  assert.equal(statSync(`${root}${dir}/.prestart/${seenOwn[0]}`).ino, statSync(spec.cwd).ino);
  assert.ok(!existsSync(`${root}${dir}/app-other`), "another application's dir");
  assert.ok(
    !existsSync(root + secretDir) || readdirSync(root + secretDir).length === 0,
    'the secret',
  );
  // Its local dir, where it saw it from its start: the application's, by inode (the launch
  // names it so: confinedLaunchLine, below).
  const seenLocal = join(localRoot, ownLocal as string);
  assert.equal(statSync(root + seenLocal).ino, statSync(handed[0] as string).ino);
  assert.deepEqual(readdirSync(root + localRoot), [ownLocal]);
  assert.ok(readFileSync(`/proc/${inner[0]}/cmdline`, 'utf8').includes('--app-id'));

  await killProcessTree(launched.pid, launched.marker, 2000, false, undefined, { sandboxed: true });
  assert.deepEqual(await waitUntilGone(inner, 10_000), []);
});

test('a confined standby serves only the launch it was handed to', {
  timeout: 120_000,
}, async (t) => {
  const { dir, localRoot, prestart } = confinedPrestarter(t);
  const port = await silentDriver(t);
  prestart.fill();
  const first = prestart.standbyPid as number;
  await waitFor('its sandbox running', () => sandboxStarted(first), t.signal);
  // Not handed over (the application had its local dirs already): spawned afresh, it stays.
  const other = join(localRoot, 'wick-executor-app-test-Ab12Cd');
  mkdirSync(other, { recursive: true });
  assert.equal(prestart.take(executorSpec(dir, port, { WICK_EXECUTOR_DIRS: other })), undefined);
  assert.equal(prestart.standbyPid, first);
  // Not a Wick executor: not handed over.
  assert.equal(
    prestart.handOverLocalDirs('app-py', { argv: ['python3', 'x.py'], env: {} }),
    undefined,
  );
  assert.equal(prestart.standbyPid, first);

  // Handed to app-test, then a launch with other dirs: discarded, not served.
  const handed = prestart.handOverLocalDirs('app-test', COMMAND);
  assert.ok(handed);
  assert.equal(prestart.handOverLocalDirs('app-again', COMMAND), undefined, 'handed once');
  assert.equal(prestart.take(executorSpec(dir, port, { WICK_EXECUTOR_DIRS: other })), undefined);
  assert.equal(prestart.standbyPid, undefined);
  assert.deepEqual(await waitUntilGone([first], 20_000), []);
  assert.ok(existsSync(handed[0] as string), "the application's dirs stay");

  // A standby handed over and not taken by its launch is dropped; another application's drop
  // leaves it.
  prestart.fill();
  const second = prestart.standbyPid as number;
  await waitFor('its sandbox running', () => sandboxStarted(second), t.signal);
  assert.ok(prestart.handOverLocalDirs('app-2', COMMAND));
  prestart.dropHandedOver('app-test');
  assert.equal(prestart.standbyPid, second);
  prestart.dropHandedOver('app-2');
  assert.equal(prestart.standbyPid, undefined);
  assert.deepEqual(await waitUntilGone([second], 20_000), []);

  // stop() leaves no dir of a standby behind.
  prestart.fill();
  await prestart.stop();
  assert.deepEqual(
    readdirSync(localRoot).filter((d) => d.startsWith('wick-executor-standby.')),
    [],
  );
  assert.deepEqual(readdirSync(join(dir, '.prestart')), []);
});

test('the launch a confined standby reads names the paths it sees', () => {
  const line = confinedLaunchLine(
    {
      argv: ['node', 'wick.cjs', 'executor'],
      env: {
        WICK_EXECUTOR_DIRS: '/d1/wick-executor-app-1-Ab12Cd:/d2/wick-executor-app-1-Ef34Gh',
        K: 'v',
      },
    },
    '/w/.prestart/m-1',
    ['/d1/wick-executor-standby.aaaaaa', '/d2/wick-executor-standby.bbbbbb'],
  );
  assert.ok(line.endsWith('\n') && !line.slice(0, -1).includes('\n'));
  assert.deepEqual(JSON.parse(line), {
    argv: ['node', 'wick.cjs', 'executor'],
    cwd: '/w/.prestart/m-1',
    env: {
      WICK_EXECUTOR_DIRS: '/d1/wick-executor-standby.aaaaaa:/d2/wick-executor-standby.bbbbbb',
      K: 'v',
    },
  });
});

test("what standbys of a worker that is gone left is removed at start; a live worker's is not", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'wick-prestart-leftovers-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const localRoot = join(dir, 'local');
  // A worker killed outright (its pid now free), and another one alive that shares both dirs.
  const gone = spawnSync(process.execPath, ['-e', '0']).pid as number;
  const live = spawn('sleep', ['600'], { stdio: 'ignore' });
  t.after(() => live.kill('SIGKILL'));
  const plant = (path: string) => {
    mkdirSync(path, { recursive: true });
    writeFileSync(join(path, 'stdout'), '');
  };
  plant(join(dir, '.prestart', `${gone}-abc-1`));
  plant(join(dir, '.prestart', `${live.pid}-abc-1`));
  plant(join(localRoot, `wick-executor-standby.${gone}-abc-1.Xy12Zq`));
  plant(join(localRoot, `wick-executor-standby.${live.pid}-abc-1.Pq34Rs`));
  plant(join(localRoot, 'app-20260101000000-0001-x')); // an application's, never a standby's
  const { sandbox } = chooseSandbox('bwrap', {
    workDir: dir,
    localDirRoots: [localRoot],
    secretDirs: [],
    secretFiles: [],
    extraReadOnly: [],
  });
  assert.ok(sandbox);
  const prestart = new ExecutorPrestarter(dir, [process.execPath, CLI], 2000, 1, undefined, {
    sandbox,
    localDirRoots: [localRoot],
  });
  t.after(() => prestart.stop());
  assert.deepEqual(readdirSync(join(dir, '.prestart')), [`${live.pid}-abc-1`]);
  assert.deepEqual(readdirSync(localRoot).sort(), [
    'app-20260101000000-0001-x',
    `wick-executor-standby.${live.pid}-abc-1.Pq34Rs`,
  ]);
  // Its own standby's dirs carry its pid, for the next worker to judge.
  prestart.fill();
  const own = readdirSync(localRoot).filter((d) =>
    d.startsWith(`wick-executor-standby.${process.pid}-`),
  );
  assert.equal(own.length, 1, readdirSync(localRoot).join(', '));
});
