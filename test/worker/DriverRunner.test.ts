/**
 * DriverRunner with real children and a ManualClock: the application copied into work/<driverId>/,
 * its variables filled in, the "Launch Command:" header, supervised relaunch with back-off (1 s,
 * 2 s, 4 s, … reset after a run longer than 5 s) observed by moving the clock by hand, and the
 * final FINISHED / FAILED / KILLED / ERROR.
 *
 * The driver application used here counts its runs (runs.txt in its directory), prints its
 * arguments, and exits only when the test writes control/exit-<run> with the exit code: so the test
 * decides when each run ends and with what, and nothing depends on real time.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import type { DriverDescription } from '../../backend/protocol/common.js';
import { ManualClock } from '../../backend/util/clock.js';
import { setLogLevel } from '../../backend/util/log.js';
import { DriverRunner } from '../../backend/worker/DriverRunner.js';
import type { RunnerHost } from '../../backend/worker/ExecutorRunner.js';
import { isAlive, readPids, waitFor } from '../helpers/processes.js';

setLogLevel('WARN');

const APP = `
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
const n = (existsSync('runs.txt') ? readFileSync('runs.txt', 'utf8').split('\\n').filter(Boolean).length : 0) + 1;
appendFileSync('runs.txt', n + '\\n');
appendFileSync('pids', process.pid + '\\n');
console.log('run ' + n + ': ' + JSON.stringify(process.argv.slice(2)));
console.error('err ' + n);
const f = process.env.CONTROL + '/exit-' + n;
const timer = setInterval(() => {
  if (!existsSync(f)) return;
  clearInterval(timer);
  process.exitCode = Number(readFileSync(f, 'utf8'));
}, 5);
`;

const host: RunnerHost = {
  host: '127.0.0.1',
  workerUrl: 'wick://127.0.0.1:40000/Worker',
  webUiUrl: 'http://127.0.0.1:8081',
  killTimeoutMs: 2000,
};

const DRIVER_ID = 'driver-20261130120000-0007';

interface Setup {
  r: DriverRunner;
  clock: ManualClock;
  finished: string[];
  workDir: string;
  appPath: string;
  /** Ends run `n` with `code`. */
  release(n: number, code: number): void;
}

function setup(
  t: TestContext,
  opts: { supervise?: boolean; appPath?: string; argv?: string[] } = {},
): Setup {
  const root = mkdtempSync(join(tmpdir(), 'wick-driver-'));
  const workDir = join(root, 'work');
  const control = join(root, 'control');
  mkdirSync(control);
  const appPath = join(root, 'app.mjs');
  writeFileSync(appPath, APP);
  const clock = new ManualClock(1_000_000);
  const finished: string[] = [];
  const desc: DriverDescription = {
    appPath: opts.appPath ?? appPath,
    mem: 256,
    cores: 1,
    supervise: opts.supervise ?? false,
    command: {
      argv: opts.argv ?? [process.execPath, '{{USER_APP}}', '{{WORKER_URL}}', '{{OTHER}}'],
      env: { CONTROL: control },
    },
  };
  const r = new DriverRunner(DRIVER_ID, desc, host, workDir, clock, (x) => finished.push(x.state));
  t.after(async () => {
    await r.kill();
    rmSync(root, { recursive: true, force: true });
  });
  const release = (n: number, code: number) => {
    // Written then renamed, so the driver never reads a half-written file.
    writeFileSync(join(control, 'tmp'), String(code));
    renameSync(join(control, 'tmp'), join(control, `exit-${n}`));
  };
  return { r, clock, finished, workDir, appPath, release };
}

/** Waits until run `n` of the driver has written its line (so it is surely running). */
function runStarted(s: Setup, n: number, t: TestContext): Promise<unknown> {
  return waitFor(
    `run ${n}`,
    () => {
      try {
        return (
          readFileSync(join(s.r.dir, 'runs.txt'), 'utf8').split('\n').filter(Boolean).length >= n
        );
      } catch {
        return false;
      }
    },
    t.signal,
  );
}

/** Waits until the runner sleeps before relaunching, after run `n`. */
function relaunching(s: Setup, n: number, t: TestContext): Promise<unknown> {
  return waitFor(
    `RELAUNCHING after run ${n}`,
    () => s.r.state === 'RELAUNCHING' && s.r.runs === n && s.clock.pendingTimers() === 1,
    t.signal,
  );
}

/** Checks that the back-off after run `n` is exactly `ms`: not a millisecond less. */
async function expectBackoff(s: Setup, n: number, ms: number, t: TestContext): Promise<void> {
  await relaunching(s, n, t);
  s.clock.advance(ms - 1);
  assert.equal(s.r.runs, n, `relaunched before ${ms} ms`);
  assert.equal(s.clock.pendingTimers(), 1);
  s.clock.advance(1);
  await waitFor(`run ${n + 1} launched`, () => s.r.runs === n + 1, t.signal);
  await runStarted(s, n + 1, t);
}

test('the app is copied into work/<driverId>/, variables substituted, "Launch Command:" header', async (t) => {
  const s = setup(t);
  const done = s.r.run();
  await runStarted(s, 1, t);
  s.release(1, 0);
  await done;
  const local = join(s.workDir, DRIVER_ID, 'app.mjs');
  assert.equal(s.r.dir, join(s.workDir, DRIVER_ID));
  assert.equal(readFileSync(local, 'utf8'), APP);
  assert.equal(
    readFileSync(join(s.r.dir, 'stdout'), 'utf8'),
    `run 1: ${JSON.stringify([host.workerUrl, '{{OTHER}}'])}\n`,
  );
  const stderr = readFileSync(join(s.r.dir, 'stderr'), 'utf8');
  assert.equal(
    stderr,
    `Launch Command: "${process.execPath}" "${local}" "${host.workerUrl}" "{{OTHER}}"\n${'='.repeat(40)}\n\nerr 1\n`,
  );
  assert.deepEqual(s.finished, ['FINISHED']);
  assert.equal(s.r.exitCode, 0);
  assert.equal(s.r.runs, 1);
});

test('supervised: relaunched after 1 s, 2 s, 4 s; reset to 1 s after a run over 5 s', async (t) => {
  const s = setup(t, { supervise: true });
  const done = s.r.run();
  await runStarted(s, 1, t);
  assert.equal(s.r.state, 'RUNNING');

  s.release(1, 1);
  await expectBackoff(s, 1, 1000, t);
  assert.equal(s.r.state, 'RUNNING');
  s.release(2, 1);
  await expectBackoff(s, 2, 2000, t);
  s.release(3, 1);
  await expectBackoff(s, 3, 4000, t);

  // Run 4 lasts 6 s of the runner's clock: a successful run, so the back-off starts over.
  assert.equal(s.clock.pendingTimers(), 0);
  s.clock.advance(6000);
  s.release(4, 3);
  await expectBackoff(s, 4, 1000, t);
  s.release(5, 3);
  await expectBackoff(s, 5, 2000, t);

  s.release(6, 0);
  await done;
  assert.deepEqual(s.finished, ['FINISHED']);
  assert.equal(s.r.runs, 6);
  assert.equal(s.r.exitCode, 0);
  // One log for all the runs: stdout appended, a header per run in stderr.
  const out = readFileSync(join(s.r.dir, 'stdout'), 'utf8').trim().split('\n');
  assert.deepEqual(
    out.map((l) => l.split(':')[0]),
    ['run 1', 'run 2', 'run 3', 'run 4', 'run 5', 'run 6'],
  );
  const stderr = readFileSync(join(s.r.dir, 'stderr'), 'utf8');
  assert.equal(stderr.match(/^Launch Command: /gm)?.length, 6);
  assert.equal(stderr.match(/^err \d$/gm)?.length, 6);
});

test('a run of exactly 5 s does not reset the back-off', async (t) => {
  const s = setup(t, { supervise: true });
  const done = s.r.run();
  await runStarted(s, 1, t);
  s.release(1, 1);
  await expectBackoff(s, 1, 1000, t);
  s.clock.advance(5000);
  s.release(2, 1);
  await expectBackoff(s, 2, 2000, t);
  s.release(3, 0);
  await done;
  assert.deepEqual(s.finished, ['FINISHED']);
});

test('not supervised, a non-zero exit is FAILED and nothing is relaunched', async (t) => {
  const s = setup(t, { supervise: false });
  const done = s.r.run();
  await runStarted(s, 1, t);
  s.release(1, 2);
  await done;
  assert.deepEqual(s.finished, ['FAILED']);
  assert.equal(s.r.exitCode, 2);
  assert.equal(s.r.runs, 1);
  assert.equal(s.clock.pendingTimers(), 0);
});

test('kill() while running is KILLED, and the process is gone', async (t) => {
  const s = setup(t, { supervise: true });
  const done = s.r.run();
  await runStarted(s, 1, t);
  const [pid] = await readPids(join(s.r.dir, 'pids'), 1, t.signal);
  await s.r.kill();
  await done;
  assert.deepEqual(s.finished, ['KILLED']);
  assert.equal(s.r.runs, 1, 'a killed driver is not relaunched, supervised or not');
  assert.equal(isAlive(pid as number), false);
});

test('kill() while waiting to relaunch is KILLED at once, without another run', async (t) => {
  const s = setup(t, { supervise: true });
  const done = s.r.run();
  await runStarted(s, 1, t);
  s.release(1, 1);
  await relaunching(s, 1, t);
  await s.r.kill();
  await done;
  assert.deepEqual(s.finished, ['KILLED']);
  assert.equal(s.r.runs, 1);
  assert.equal(s.clock.pendingTimers(), 0, 'the back-off timer is cancelled');
});

test('an app file that does not exist is ERROR, naming it, and nothing runs', async (t) => {
  const missing = join(tmpdir(), 'wick-no-such-dir', 'missing-app.mjs');
  const s = setup(t, { appPath: missing });
  await s.r.run();
  assert.deepEqual(s.finished, ['ERROR']);
  assert.ok(s.r.exception?.includes('missing-app.mjs'), s.r.exception);
  assert.equal(s.r.runs, 0);
  assert.equal(s.r.pid, undefined);
});

test('a driver program that cannot be started is ERROR too', async (t) => {
  const s = setup(t, { argv: ['/nonexistent/driver-program', '{{USER_APP}}'] });
  await s.r.run();
  assert.deepEqual(s.finished, ['ERROR']);
  assert.ok(s.r.exception?.includes('/nonexistent/driver-program'), s.r.exception);
});

test('what a run leaves running (a setsid daemon) is killed when the run ends', async (t) => {
  const s = setup(t, {
    argv: [
      'bash',
      '-c',
      `setsid bash -c '(exec sleep 300) & echo $! >> pids' & while [ "$(wc -l < pids 2>/dev/null || echo 0)" -lt 1 ]; do sleep 0.01; done; exit 0`,
    ],
  });
  await s.r.run();
  assert.deepEqual(s.finished, ['FINISHED']);
  const [daemon] = await readPids(join(s.r.dir, 'pids'), 1);
  assert.equal(isAlive(daemon as number), false, `daemon ${daemon} survived`);
});
