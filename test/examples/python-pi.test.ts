/**
 * Any language: examples/python/pi_driver.py (a driver written with Python's standard library
 * only) computes Pi on a real `wick local-cluster`, whose workers launch examples/python/executor.py
 * as the application's executors. Authenticated by default: the driver finds the cluster secret as
 * Wick does (the default secret file the master generated, WICK_AUTH_SECRET, or a submission's key
 * in WICK_APP_CREDENTIAL), and each executor proves the key of its application, which its worker
 * hands it instead of the secret; and open, when every side says wick.authenticate=false. Each
 * cluster has a config folder of its own (XDG_CONFIG_HOME), so that the secret one generates is
 * its own. Afterwards nothing is left running: every process of a run (daemons, driver, executors,
 * their task processes) carries a marker in its environment.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, type TestContext, test } from 'node:test';
import { deriveKey } from '../../backend/rpc/credentials.js';
import {
  assertBuilt,
  killMarked,
  markedProcesses,
  repoRoot,
  startWick,
  type WickProcess,
} from '../helpers/cli.js';
import { waitFor } from '../helpers/processes.js';

before(assertBuilt);

const driverScript = join(repoRoot, 'examples', 'python', 'pi_driver.py');
const executorScript = join(repoRoot, 'examples', 'python', 'executor.py');
const SECRET = 'python pi secret, not generated';
/** A hang guard only: a run takes a few seconds. */
const TIMEOUT = { timeout: 120_000 };

interface Cluster {
  lc: WickProcess;
  mark: string;
  workDir: string;
  url: string;
  /** The cluster's XDG_CONFIG_HOME, where its master generates the secret if it finds none. */
  config: string;
}

/** The environment of the test without its WICK_* settings, plus `extra`. */
function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('WICK_')),
  );
  return { ...env, ...extra };
}

/** An empty config folder (XDG_CONFIG_HOME), removed when the test ends. */
function configDir(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'wick-pypi-config-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** The default secret file under a config folder. */
function secretFile(config: string): string {
  return join(config, 'wick', 'cluster-secret');
}

/**
 * `wick local-cluster` with 2 workers of 1 core on free ports, with XDG_CONFIG_HOME `config` (a
 * fresh one by default); everything killed after.
 */
async function startCluster(
  t: TestContext,
  conf: string[] = [],
  env: Record<string, string> = {},
  config = configDir(t),
): Promise<Cluster> {
  const mark = randomUUID();
  const workDir = mkdtempSync(join(tmpdir(), 'wick-pypi-'));
  t.after(async () => {
    await killMarked(mark);
    rmSync(workDir, { recursive: true, force: true });
  });
  const lc = startWick(
    [
      'local-cluster',
      '--workers',
      '2',
      '--cores',
      '1',
      '--port',
      '0',
      '--webui-port',
      '0',
      '--work-dir',
      workDir,
      ...conf.flatMap((c) => ['--conf', c]),
    ],
    // Confined as a user's worker is by default (the test run's workers are not: scripts/test.mjs).
    {
      mark,
      cwd: workDir,
      env: { XDG_CONFIG_HOME: config, WICK_EXECUTOR_SANDBOX: 'auto', ...env },
    },
  );
  t.after(() => lc.child.stdin?.destroy());
  const url = await lc.firstLine();
  return { lc, mark, workDir, url, config };
}

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs pi_driver.py to its end, marked as the cluster's processes are; on the cluster's machine,
 * as its user (the same XDG_CONFIG_HOME) unless `env` says otherwise.
 */
async function runDriver(
  t: TestContext,
  c: Cluster,
  args: string[],
  env: Record<string, string> = {},
): Promise<Run> {
  const child = spawn('python3', [driverScript, '--master', c.url, ...args], {
    cwd: c.workDir,
    env: cleanEnv({ XDG_CONFIG_HOME: c.config, ...env, WICK_TEST_MARK: c.mark }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => {
    stdout += s;
  });
  child.stderr.setEncoding('utf8').on('data', (s: string) => {
    stderr += s;
  });
  const [code, signal] = (await new Promise((resolve) =>
    child.on('close', (...r) => resolve(r)),
  )) as [number | null, NodeJS.Signals | null];
  return { code, signal, stdout, stderr };
}

interface ExecutorFiles {
  dir: string;
  stdout: string;
  stderr: string;
}

/** Each executor's directory in the work dir (`<appId>/<execId>/`) and what it wrote. */
function executorsOf(c: Cluster, appId: string): ExecutorFiles[] {
  const appDir = join(c.workDir, appId);
  assert.ok(existsSync(appDir), `no ${appDir}; work dir: ${readdirSync(c.workDir).join(', ')}`);
  return readdirSync(appDir)
    .filter((d) => /^\d+$/.test(d))
    .map((d) => {
      const dir = join(appDir, d);
      const read = (f: string) =>
        existsSync(join(dir, f)) ? readFileSync(join(dir, f), 'utf8') : '';
      return { dir, stdout: read('stdout'), stderr: read('stderr') };
    });
}

function appIdOf(run: Run): string {
  const m = /Connected to Wick cluster with app ID (app-\S+)/.exec(run.stderr);
  assert.ok(m, `no app id in the driver's log:\n${run.stderr}`);
  return m[1] as string;
}

function assertPi(run: Run): void {
  assert.equal(run.code, 0, `pi_driver.py failed:\n${run.stderr}`);
  const m = /^Pi is roughly (\d+\.\d+)$/m.exec(run.stdout);
  assert.ok(m, `no "Pi is roughly" line in:\n${run.stdout}`);
  const pi = Number(m[1]);
  assert.ok(Math.abs(pi - Math.PI) < 0.05, `Pi is roughly ${pi}: too far from π`);
}

/**
 * The Python executors ran the job: each was launched with the Python command, and between them
 * they finished each of the 4 tasks once; those that registered say how they authenticated
 * (`auth`: "off", or the key they proved) and were stopped by the driver. Returns them, and the
 * pids they and their task processes logged.
 */
async function assertPythonExecutorsRan(
  c: Cluster,
  appId: string,
  auth: string,
): Promise<{ executors: ExecutorFiles[]; pids: number[] }> {
  // The driver may end before an executor has written its last line ("Exiting with status …"):
  // wait for every executor that registered to have written it (the test's timeout bounds this).
  let executors = executorsOf(c, appId);
  while (
    executors.some(
      (e) =>
        e.stdout.includes('Registered with driver') && !/Exiting with status \d+\n$/.test(e.stdout),
    )
  ) {
    await new Promise((r) => setTimeout(r, 20));
    executors = executorsOf(c, appId);
  }
  // One per worker; a third when one came up after the job was done, was refused by the stopping
  // driver (exit status 1) and replaced by the master before the application ended.
  assert.ok(executors.length >= 2, `executors: ${executors.map((e) => e.dir).join(', ')}`);
  for (const e of executors) {
    assert.ok(
      e.stderr.startsWith(`Wick Executor Command: "python3" "${executorScript}" "--driver-url"`),
      e.stderr,
    );
  }
  const all = executors.map((e) => e.stdout).join('\n');
  const finished = [...all.matchAll(/Finished task (\d+)\.\d+ in stage 0\.0/g)].map((m) =>
    Number(m[1]),
  );
  assert.deepEqual(finished.sort(), [0, 1, 2, 3], all);
  const registered = executors.filter((e) => e.stdout.includes('Registered with driver'));
  assert.ok(registered.length >= 1, all);
  for (const e of registered) {
    assert.match(
      e.stdout,
      new RegExp(
        `Python executor \\d+ of ${appId} \\(pid \\d+, 1 core\\(s\\), authentication ${literal(auth)}\\)`,
      ),
    );
    // Stopped by the driver (StopExecutor), not killed.
    assert.match(e.stdout, /Driver commanded a shutdown\n.*Exiting with status 0\n$/, e.stdout);
  }
  const pids = [...all.matchAll(/\(pid (\d+)/g)].map((m) => Number(m[1]));
  assert.ok(pids.length >= 2, `an executor and a task process at least:\n${all}`);
  // Confined (wick.executor.sandbox, bwrap here), each executor is the first process of its own
  // PID namespace after bwrap's init: the pids it logs are its namespace's, not this machine's.
  const executorPids = [...all.matchAll(/Python executor \d+ of \S+ \(pid (\d+)/g)].map((m) =>
    Number(m[1]),
  );
  assert.ok(
    executorPids.length > 0 && executorPids.every((p) => p === 2),
    `each Python executor in a PID namespace of its own (pid 2): ${executorPids.join(', ')}`,
  );
  return { executors: registered, pids };
}

function literal(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * The names of the variables an executor's environment held when it started, as it logged them
 * (pi_driver.py --executor-arg=--log-env-names).
 */
function envNamesOf(e: ExecutorFiles): string[] {
  const m = /Executor: Environment variables: (.*)$/m.exec(e.stderr);
  assert.ok(m, `no environment line in ${e.dir}/stderr:\n${e.stderr}`);
  return (m[1] as string).split(' ');
}

/** SIGTERM to local-cluster; then neither its processes nor the Python ones may be left. */
async function stopAndAssertNothingLeft(c: Cluster): Promise<void> {
  c.lc.child.kill('SIGTERM');
  assert.deepEqual(await c.lc.exited, { code: 0, signal: null }, c.lc.stderr());
  // A confined standby executor ends with its worker (bwrap --die-with-parent): the kernel's kill
  // may land a moment after the cluster's exit. Bounded: one still there then was left behind.
  await waitFor(
    'the run’s processes to be gone',
    () => markedProcesses(c.mark).length === 0,
    5_000,
  ).catch(() => undefined);
  // The pids the Python processes logged are their PID namespace's (see assertPythonExecutorsRan):
  // those left running are found by the run's mark, which they inherit, as every other process.
  assert.deepEqual(
    markedProcesses(c.mark).filter((p) => /python/.test(p.cmdline)),
    [],
    'Python processes left running',
  );
  assert.deepEqual(markedProcesses(c.mark), [], 'processes of the run left running');
}

test(
  "by default the cluster authenticates: the driver finds the secret its master generated, each executor proves its application's key",
  TIMEOUT,
  async (t) => {
    const c = await startCluster(t);
    const generated = readFileSync(secretFile(c.config), 'utf8').trim();
    assert.ok(generated.length >= 16, `generated secret: ${generated.length} characters`);
    const run = await runDriver(t, c, ['--slices', '4']);
    assertPi(run);
    const appId = appIdOf(run);
    assert.ok(
      run.stderr.includes(`(authentication on: cluster secret from ${secretFile(c.config)})`),
      run.stderr,
    );
    assert.match(
      run.stderr,
      /Registered executor wick:\/\/client-pyExecutor-[0-9a-f]{12}\/Executor/,
    );
    assert.match(run.stderr, new RegExp(`Stopped application ${appId}`));
    await assertPythonExecutorsRan(c, appId, `app:${appId} key`);
    await stopAndAssertNothingLeft(c);
  },
);

test(
  "with WICK_AUTH_SECRET in the cluster's and the driver's environment, an executor has neither it nor any key but its application's",
  TIMEOUT,
  async (t) => {
    const c = await startCluster(t, [], { WICK_AUTH_SECRET: SECRET });
    const run = await runDriver(t, c, ['--slices', '4', '--executor-arg=--log-env-names'], {
      WICK_AUTH_SECRET: SECRET,
    });
    assertPi(run);
    assert.match(
      run.stderr,
      /Listening on 127\.0\.0\.1:\d+ \(authentication on: cluster secret from WICK_AUTH_SECRET\)/,
    );
    // The secret came from the environment: the master had no reason to write one.
    assert.equal(existsSync(secretFile(c.config)), false);
    const appId = appIdOf(run);
    const { executors } = await assertPythonExecutorsRan(c, appId, `app:${appId} key`);
    for (const e of executors) {
      const names = envNamesOf(e);
      assert.ok(names.includes('WICK_APP_CREDENTIAL'), names.join(' '));
      assert.ok(names.includes('WICK_TEST_MARK'), 'the worker passes its environment on');
      assert.ok(!names.includes('WICK_AUTH_SECRET'), names.join(' '));
    }
    await stopAndAssertNothingLeft(c);
  },
);

test(
  "a driver started with a submission's key (WICK_APP_CREDENTIAL, as `wick submit` hands one) registers with it and holds no secret",
  TIMEOUT,
  async (t) => {
    const c = await startCluster(t, [`wick.authenticate.secret=${SECRET}`]);
    const id = 'driver-python-test-0001';
    const run = await runDriver(t, c, ['--slices', '4'], {
      WICK_APP_CREDENTIAL: `submission:${id}:${deriveKey(SECRET, 'submission', id)}`,
    });
    assertPi(run);
    assert.ok(
      run.stderr.includes(`(authentication on: submission:${id} key from WICK_APP_CREDENTIAL)`),
      run.stderr,
    );
    const appId = appIdOf(run);
    await assertPythonExecutorsRan(c, appId, `app:${appId} key`);
    await stopAndAssertNothingLeft(c);
  },
);

test(
  'open: wick.authenticate=false on the cluster and the driver wins over a secret in the default file; executors get no key',
  TIMEOUT,
  async (t) => {
    const config = configDir(t);
    mkdirSync(join(config, 'wick'));
    writeFileSync(secretFile(config), `${SECRET}\n`, { mode: 0o600 });
    const c = await startCluster(t, ['wick.authenticate=false'], {}, config);
    const run = await runDriver(t, c, [
      '--slices',
      '4',
      '--conf',
      'wick.authenticate=false',
      '--executor-arg=--log-env-names',
    ]);
    assertPi(run);
    assert.match(
      run.stderr,
      /Listening on 127\.0\.0\.1:\d+ \(authentication off \(wick\.authenticate=false\)\)/,
    );
    const { executors } = await assertPythonExecutorsRan(c, appIdOf(run), 'off');
    for (const e of executors) {
      const names = envNamesOf(e);
      assert.ok(names.includes('WICK_TEST_MARK'), 'the worker passes its environment on');
      assert.ok(!names.includes('WICK_APP_CREDENTIAL'), names.join(' '));
      assert.ok(!names.includes('WICK_AUTH_SECRET'), names.join(' '));
    }
    await stopAndAssertNothingLeft(c);
  },
);

test(
  'a Python driver that finds no secret runs open, and a cluster that authenticates refuses it',
  TIMEOUT,
  async (t) => {
    const c = await startCluster(t);
    assert.ok(existsSync(secretFile(c.config)), 'the master generated its secret');
    // Another user, or another machine: an empty config folder and no WICK_AUTH_SECRET.
    const elsewhere = configDir(t);
    const run = await runDriver(t, c, ['--slices', '1'], { XDG_CONFIG_HOME: elsewhere });
    assert.equal(run.code, 1, run.stderr);
    assert.ok(
      run.stderr.includes(
        `(authentication off: no cluster secret in wick.authenticate.secret, wick.authenticate.secret.file, WICK_AUTH_SECRET or ${secretFile(elsewhere)})`,
      ),
      run.stderr,
    );
    assert.match(
      run.stderr,
      /^error: Cannot reach a master\. Tried:\n {2}wick:\/\/127\.0\.0\.1:\d+: Authentication required/m,
    );
    assert.equal(run.stdout, '');
    await stopAndAssertNothingLeft(c);
  },
);
