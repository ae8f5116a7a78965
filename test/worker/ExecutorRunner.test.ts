/**
 * ExecutorRunner with real children: the states it reports (RUNNING, then EXITED / KILLED /
 * FAILED), the variables it fills into the command, the environment it gives the executor, and
 * the two files it leaves in work/<appId>/<execId>/.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { type TestContext, test } from 'node:test';
import type { ApplicationDescription } from '../../backend/protocol/common.js';
import { setLogLevel } from '../../backend/util/log.js';
import { ExecutorRunner, type RunnerHost } from '../../backend/worker/ExecutorRunner.js';
import { isAlive, readPids, waitFor } from '../helpers/processes.js';

setLogLevel('WARN');

const host: RunnerHost = {
  host: '127.0.0.1',
  workerUrl: 'wick://127.0.0.1:40000/Worker',
  webUiUrl: 'http://127.0.0.1:8081',
  killTimeoutMs: 2000,
};

function appDesc(argv: string[], extra: Partial<ApplicationDescription> = {}) {
  return {
    name: 'test-app',
    user: 'tester',
    memoryPerExecutorMB: 256,
    command: { argv, env: { APP_ENV: 'from-the-app' } },
    ...extra,
  } satisfies ApplicationDescription;
}

/** A runner in a fresh work dir, recording every state it reports. */
function runner(
  t: TestContext,
  argv: string[],
  extra: Partial<ApplicationDescription> = {},
  localDirs: string[] = ['/tmp/local-a', '/tmp/local-b'],
  on: RunnerHost = host,
) {
  const workDir = mkdtempSync(join(tmpdir(), 'wick-exec-'));
  const states: { state: string; message: string | undefined; exitCode: number | undefined }[] = [];
  const r = new ExecutorRunner(
    'app-20261130120000-0001',
    3,
    appDesc(argv, extra),
    2,
    512,
    on,
    workDir,
    localDirs,
    (x) => states.push({ state: x.state, message: x.message, exitCode: x.exitCode }),
  );
  t.after(async () => {
    await r.kill();
    rmSync(workDir, { recursive: true, force: true });
  });
  return { r, states, workDir };
}

const node = process.execPath;

test('RUNNING, then EXITED with "Command exited with code N" and the exit status', async (t) => {
  const { r, states, workDir } = runner(t, [
    node,
    '-e',
    "console.log('hello from', process.cwd()); console.error('oops'); process.exitCode = 5",
  ]);
  await r.start();
  assert.equal(states[0]?.state, 'RUNNING');
  assert.ok((r.pid ?? 0) > 0);
  await r.finished;
  assert.deepEqual(states, [
    { state: 'RUNNING', message: undefined, exitCode: undefined },
    // It failed by itself: the end of its stderr says why, without the command header.
    {
      state: 'EXITED',
      message: 'Command exited with code 5\nThe end of its stderr:\noops',
      exitCode: 5,
    },
  ]);
  assert.equal(r.dir, join(workDir, 'app-20261130120000-0001', '3'));
  assert.equal(readFileSync(join(r.dir, 'stdout'), 'utf8'), `hello from ${r.dir}\n`);
  const stderr = readFileSync(join(r.dir, 'stderr'), 'utf8').split('\n');
  assert.match(stderr[0] as string, /^Wick Executor Command: "[^"]*node[^"]*" "-e" "console/);
  assert.equal(stderr[1], '='.repeat(40));
  assert.equal(stderr[2], '');
  assert.equal(stderr[3], 'oops');
});

test('the stderr quoted for a failed executor is its last lines, bounded', async (t) => {
  const { r, states } = runner(t, [
    node,
    '-e',
    "for (let i = 0; i < 500; i++) console.error('line ' + i + ' ' + 'x'.repeat(50)); process.exit(1)",
  ]);
  await r.start();
  await r.finished;
  const message = states.at(-1)?.message ?? '';
  const [first, intro, ...quoted] = message.split('\n');
  assert.deepEqual([first, intro], ['Command exited with code 1', 'The end of its stderr:']);
  assert.equal(quoted.length, 10);
  assert.match(quoted.at(-1) as string, /^line 499 x+$/);
  assert.ok(Buffer.byteLength(message) < 2200, `${Buffer.byteLength(message)} bytes`);
});

test('exit code 0 is EXITED too, with status 0', async (t) => {
  const { r, states } = runner(t, [node, '-e', '0']);
  await r.start();
  await r.finished;
  assert.deepEqual(states.at(-1), {
    state: 'EXITED',
    message: 'Command exited with code 0',
    exitCode: 0,
  });
});

test('the variables are substituted and the environment set', async (t) => {
  const script = `
    const e = process.env;
    console.log(JSON.stringify({
      args: process.argv.slice(1),
      dirs: e.WICK_EXECUTOR_DIRS,
      out: e.WICK_LOG_URL_STDOUT,
      err: e.WICK_LOG_URL_STDERR,
      app: e.APP_ENV,
    }));`;
  const { r } = runner(
    t,
    [
      node,
      '-e',
      script,
      '{{EXECUTOR_ID}}',
      '{{HOSTNAME}}',
      '{{CORES}}',
      '{{MEMORY}}',
      '{{APP_ID}}',
      '{{WORKER_URL}}',
      '{{DRIVER_URL}}',
      '--id={{APP_ID}}/{{EXECUTOR_ID}}',
      '{{UNKNOWN}}',
    ],
    { driverUrl: 'wick://127.0.0.1:5000/CoarseGrainedScheduler' },
  );
  await r.start();
  await r.finished;
  const printed = JSON.parse(readFileSync(join(r.dir, 'stdout'), 'utf8'));
  assert.deepEqual(printed, {
    args: [
      '3',
      '127.0.0.1',
      '2',
      '512',
      'app-20261130120000-0001',
      'wick://127.0.0.1:40000/Worker',
      'wick://127.0.0.1:5000/CoarseGrainedScheduler',
      '--id=app-20261130120000-0001/3',
      '{{UNKNOWN}}',
    ],
    dirs: ['/tmp/local-a', '/tmp/local-b'].join(delimiter),
    out: 'http://127.0.0.1:8081/logPage/?appId=app-20261130120000-0001&executorId=3&logType=stdout',
    err: 'http://127.0.0.1:8081/logPage/?appId=app-20261130120000-0001&executorId=3&logType=stderr',
    app: 'from-the-app',
  });
  // The header shows the command as run, variables filled in.
  assert.match(
    readFileSync(join(r.dir, 'stderr'), 'utf8'),
    /^Wick Executor Command: [\s\S]* "3" "127\.0\.0\.1" "2" "512" "app-20261130120000-0001"/,
  );
});

test("a worker with its shuffle service tells its executors the service's address; one without, nothing", async (t) => {
  const script = 'console.log(JSON.stringify(process.env.WICK_SHUFFLE_SERVICE_ADDRESS ?? null))';
  const printed = async (on: RunnerHost) => {
    const { r } = runner(t, [node, '-e', script], {}, undefined, on);
    await r.start();
    await r.finished;
    return JSON.parse(readFileSync(join(r.dir, 'stdout'), 'utf8'));
  };
  assert.equal(
    await printed({ ...host, shuffleServiceAddress: '127.0.0.1:7337' }),
    '127.0.0.1:7337',
  );
  assert.equal(await printed(host), null);
});

test('without a driver URL, {{DRIVER_URL}} becomes empty', async (t) => {
  const { r } = runner(t, [
    node,
    '-e',
    'console.log(JSON.stringify(process.argv.slice(1)))',
    '{{DRIVER_URL}}',
  ]);
  await r.start();
  await r.finished;
  assert.deepEqual(JSON.parse(readFileSync(join(r.dir, 'stdout'), 'utf8')), ['']);
});

test('kill() kills the whole tree and reports KILLED', async (t) => {
  const { r, states } = runner(t, [
    'bash',
    '-c',
    `setsid bash -c 'echo $$ >> pids; exec sleep 300' & echo $$ >> pids; exec sleep 300`,
  ]);
  await r.start();
  const pids = await readPids(join(r.dir, 'pids'), 2, t.signal);
  await r.kill();
  assert.deepEqual(
    states.map((s) => s.state),
    ['RUNNING', 'KILLED'],
  );
  const last = states.at(-1);
  assert.equal(last?.message, 'Command exited with signal SIGTERM');
  assert.equal(last?.exitCode, 143);
  for (const pid of pids) assert.equal(isAlive(pid), false, `pid ${pid} survived`);
  // Killing again is harmless and reports nothing more.
  await r.kill();
  assert.equal(states.length, 2);
});

test('a kill that meets an executor exiting 0 on its own (StopExecutor) reports EXITED, not KILLED', async (t) => {
  // It ignores SIGTERM and exits 0 a moment later, as an executor finishing its StopExecutor does
  // while its application unregisters and the master kills what it still lists.
  const { r, states } = runner(t, [
    node,
    '-e',
    "process.on('SIGTERM', () => setTimeout(() => process.exit(0), 50)); require('fs').writeFileSync('ready', ''); setInterval(() => {}, 1000);",
  ]);
  await r.start();
  await waitFor('the executor ready', () => existsSync(join(r.dir, 'ready')), t.signal);
  await r.kill();
  assert.deepEqual(
    states.map((s) => [s.state, s.exitCode]),
    [
      ['RUNNING', undefined],
      ['EXITED', 0],
    ],
  );
  assert.equal(states.at(-1)?.message, 'Command exited with code 0');
});

test('a kill before the process started ends it as KILLED without running anything', async (t) => {
  const { r, states } = runner(t, [node, '-e', "require('fs').writeFileSync('ran', '')"]);
  const killed = r.kill();
  await r.start();
  await killed;
  assert.deepEqual(states, [
    { state: 'KILLED', message: 'Killed before it started', exitCode: undefined },
  ]);
  assert.equal(r.pid, undefined);
});

test('a process that dies of a signal on its own is EXITED, with 128 + the signal number', async (t) => {
  const { r, states } = runner(t, ['bash', '-c', 'kill -KILL $$']);
  await r.start();
  await r.finished;
  assert.deepEqual(states.at(-1), {
    state: 'EXITED',
    message: 'Command exited with signal SIGKILL',
    exitCode: 137,
  });
});

test('a spawn failure is FAILED with the reason, and never RUNNING', async (t) => {
  const missing = '/nonexistent/wick-executor-program';
  const { r, states } = runner(t, [missing, '{{EXECUTOR_ID}}']);
  await r.start();
  await r.finished;
  assert.equal(states.length, 1);
  assert.equal(states[0]?.state, 'FAILED');
  assert.ok(states[0]?.message?.includes(missing), states[0]?.message);
  assert.equal(r.isFinished, true);
  // kill() after the failure is a no-op.
  await r.kill();
  assert.equal(states.length, 1);
});

test('a work dir that cannot be created is FAILED too', async (t) => {
  const { r, states, workDir } = runner(t, [node, '-e', '0']);
  // A file where the application's directory should be.
  writeFileSync(join(workDir, 'app-20261130120000-0001'), 'not a directory');
  await r.start();
  await r.finished;
  assert.equal(states.length, 1);
  assert.equal(states[0]?.state, 'FAILED');
  assert.match(states[0]?.message ?? '', /^Failed to launch executor app-20261130120000-0001\/3: /);
});

test('an escaped daemon of the executor dies with it (marker)', async (t) => {
  const { r } = runner(t, [
    'bash',
    '-c',
    `setsid bash -c '(exec sleep 300) & echo $! >> pids' & echo $$ >> pids; exec sleep 300`,
  ]);
  await r.start();
  const pids = await readPids(join(r.dir, 'pids'), 2, t.signal);
  await r.kill();
  assert.equal(r.state, 'KILLED');
  for (const pid of pids) assert.equal(isAlive(pid), false, `pid ${pid} survived`);
});
