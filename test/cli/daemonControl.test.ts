/**
 * `wick start-master`, `start-worker`, `stop-master`, `stop-worker` as an operator runs them (Spark's
 * start-*.sh / stop-*.sh): real daemons in the background, found by their pid files and by a
 * marker in their environment, so that a failed test leaves none behind.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { before, test } from 'node:test';
import {
  assertBuilt,
  isAlive,
  killMarked,
  markedProcesses,
  type RunResult,
  runWick,
  startWick,
  waitUntilGone,
} from '../helpers/cli.js';
import { HeldPorts } from '../helpers/net.js';
import { waitFor } from '../helpers/processes.js';

before(assertBuilt);

const user = userInfo().username;

interface Sandbox {
  dir: string;
  mark: string;
  env: NodeJS.ProcessEnv;
  pidDir: string;
  logDir: string;
  wick(args: string[], extra?: NodeJS.ProcessEnv): Promise<RunResult>;
}

/** A pid dir, a log dir and a config dir of the test's own; every daemon killed at its end. */
function sandbox(t: { after(f: () => Promise<void>): void }): Sandbox {
  const dir = mkdtempSync(join(tmpdir(), 'wick-daemon-ctl-'));
  const mark = randomUUID();
  const pidDir = join(dir, 'pids');
  const logDir = join(dir, 'logs');
  const env: NodeJS.ProcessEnv = {
    WICK_PID_DIR: pidDir,
    WICK_LOG_DIR: logDir,
    XDG_CONFIG_HOME: join(dir, 'config'),
  };
  t.after(async () => {
    await killMarked(mark);
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    dir,
    mark,
    env,
    pidDir,
    logDir,
    wick: (args, extra) => runWick(args, { mark, cwd: dir, env: { ...env, ...extra } }),
  };
}

const MASTER_ARGS = ['--host', '127.0.0.1', '--port', '0', '--webui-port', '0'];

function pidIn(file: string): number {
  return Number(readFileSync(file, 'utf8').trim());
}

function masterUrlOf(r: RunResult): string {
  const m = /at (wick:\/\/[\d.]+:\d+)/.exec(r.stdout);
  assert.ok(m, `start-master says where the master is:\n${r.stdout}\n${r.stderr}`);
  return m[1] as string;
}

test('start-master detaches with a pid file and a log, refuses a second copy, and stop-master ends it', async (t) => {
  const s = sandbox(t);
  const started = await s.wick(['start-master', ...MASTER_ARGS]);
  assert.equal(started.code, 0, started.stderr);
  const pidFile = join(s.pidDir, `wick-${user}-master-1.pid`);
  assert.ok(existsSync(pidFile), `pid file ${pidFile}; pid dir has ${readdirSync(s.pidDir)}`);
  const pid = pidIn(pidFile);
  assert.ok(isAlive(pid), 'the master runs after start-master returned');
  const logs = readdirSync(s.logDir);
  assert.equal(logs.length, 1, `one log: ${logs}`);
  const log = join(s.logDir, logs[0] as string);
  assert.match(logs[0] as string, /^wick-[\w.-]+-master-1-[\w.-]+\.out$/);
  assert.ok(started.stdout.includes(`logging to ${log}`), started.stdout);
  assert.ok(started.stdout.includes(`process ${pid}`), started.stdout);
  const url = masterUrlOf(started);
  // The master serves: a client gets its state.
  const status = await s.wick(['status', '--master', url]);
  assert.equal(status.code, 0, status.stderr);
  assert.match(status.stdout, /\(ALIVE\)/);

  const second = await s.wick(['start-master', ...MASTER_ARGS]);
  assert.equal(second.code, 1);
  assert.ok(
    second.stderr.includes(`master running as process ${pid}. Stop it first.`),
    second.stderr,
  );
  assert.equal(pidIn(pidFile), pid, 'the pid file still names the first');
  assert.equal(markedProcesses(s.mark).length, 1, 'no second master is left running');

  const stopped = await s.wick(['stop-master']);
  assert.equal(stopped.code, 0, stopped.stderr);
  assert.ok(stopped.stdout.includes(`stopped master (process ${pid})`), stopped.stdout);
  assert.equal(existsSync(pidFile), false, 'pid file removed');
  assert.deepEqual(
    await waitUntilGone([pid], 1),
    [],
    'the master is gone when stop-master returns',
  );
  const again = await s.wick(['stop-master']);
  assert.equal(again.code, 0);
  assert.match(again.stdout, /no master to stop/);
});

test('a restart rotates the logs as Spark does, keeping 5 earlier ones', async (t) => {
  const s = sandbox(t);
  const first = await s.wick(['start-master', ...MASTER_ARGS]);
  assert.equal(first.code, 0, first.stderr);
  const log = join(s.logDir, readdirSync(s.logDir)[0] as string);
  assert.equal((await s.wick(['stop-master'])).code, 0);
  const firstRun = readFileSync(log, 'utf8');
  assert.match(firstRun, /Wick Command: .*"master"/);
  // Five older logs, marked, as five earlier restarts would have left them.
  for (let n = 1; n <= 5; n++) writeFileSync(`${log}.${n}`, `run -${n}\n`);
  const second = await s.wick(['start-master', ...MASTER_ARGS]);
  assert.equal(second.code, 0, second.stderr);
  assert.equal(readFileSync(`${log}.1`, 'utf8'), firstRun, 'the last run’s log is .1');
  for (let n = 2; n <= 5; n++) {
    assert.equal(
      readFileSync(`${log}.${n}`, 'utf8'),
      `run -${n - 1}\n`,
      `.${n - 1} moved to .${n}`,
    );
  }
  assert.equal(existsSync(`${log}.6`), false, 'the oldest (.5) is dropped: 5 kept');
  assert.match(readFileSync(log, 'utf8'), /Wick Command: /, 'the new run logs afresh');
  assert.ok(!readFileSync(log, 'utf8').includes(firstRun.split('\n')[2] ?? '∅'));
  assert.equal((await s.wick(['stop-master'])).code, 0);
});

test('a stale pid file is cleaned: a dead pid, and a live process that is not a wick master', async (t) => {
  const s = sandbox(t);
  mkdirSync(s.pidDir, { recursive: true });
  const pidFile = join(s.pidDir, `wick-${user}-master-1.pid`);
  // A live process that is not Wick, whose pid a recycled pid file might name.
  const bystander = spawn('sleep', ['600'], { stdio: 'ignore' });
  t.after(() => void bystander.kill('SIGKILL'));
  const bystanderPid = bystander.pid as number;
  writeFileSync(pidFile, `${bystanderPid}\n`);
  const stop = await s.wick(['stop-master']);
  assert.equal(stop.code, 0, stop.stderr);
  assert.ok(
    stop.stdout.includes(
      `no master to stop (removed the stale pid file of process ${bystanderPid})`,
    ),
    stop.stdout,
  );
  assert.equal(existsSync(pidFile), false);
  assert.ok(isAlive(bystanderPid), 'the process the stale pid file named is not signalled');

  // A pid that is gone: start-master clears it and starts.
  const dead = spawn('true');
  await new Promise((r) => dead.once('exit', r));
  writeFileSync(pidFile, `${dead.pid}\n`);
  const started = await s.wick(['start-master', ...MASTER_ARGS]);
  assert.equal(started.code, 0, started.stderr);
  assert.match(
    started.stdout,
    new RegExp(`removed stale pid file .* \\(process ${dead.pid} is not a running wick master\\)`),
  );
  assert.notEqual(pidIn(pidFile), dead.pid);
  assert.ok(isAlive(pidIn(pidFile)));
  assert.equal((await s.wick(['stop-master'])).code, 0);
});

test('a master that fails to start is reported with its log, and leaves no pid file', async (t) => {
  const s = sandbox(t);
  const held = await HeldPorts.acquire(1);
  t.after(() => held.releaseAll());
  const r = await s.wick([
    'start-master',
    '--host',
    '127.0.0.1',
    '--port',
    String(held.base),
    '--webui-port',
    '0',
    '--conf',
    'wick.port.maxRetries=0',
  ]);
  assert.equal(r.code, 1, r.stdout);
  assert.match(r.stderr, /failed to launch master: it exited \(1\) before serving/);
  assert.match(r.stderr, /full log in .*wick-.*-master-1-.*\.out/);
  assert.deepEqual(readdirSync(s.pidDir), [], 'no pid file');
  assert.deepEqual(markedProcesses(s.mark), []);
});

test('start-worker --instances 3: three workers on counted-up ports, ALIVE at the master, each its own pid and log; stop-worker stops all', async (t) => {
  const s = sandbox(t);
  const secret = randomBytes(24).toString('base64url');
  const master = await s.wick(['start-master', ...MASTER_ARGS], { WICK_AUTH_SECRET: secret });
  assert.equal(master.code, 0, master.stderr);
  const url = masterUrlOf(master);
  const rpc = await HeldPorts.acquire(3);
  const ui = await HeldPorts.acquire(3);
  for (let i = 0; i < 3; i++) {
    await rpc.release(rpc.base + i);
    await ui.release(ui.base + i);
  }
  // The secret on stdin, as start-workers sends it over ssh.
  const p = startWick(
    [
      'start-worker',
      url,
      '--secret-stdin',
      '--instances',
      '3',
      '--host',
      '127.0.0.1',
      '--port',
      String(rpc.base),
      '--webui-port',
      String(ui.base),
      '--cores',
      '1',
      '--memory',
      '256m',
      '--work-dir',
      join(s.dir, 'work'),
    ],
    { mark: s.mark, cwd: s.dir, env: s.env },
  );
  p.child.stdin?.end(`${secret}\n`);
  const { code } = await p.exited;
  assert.equal(code, 0, `${p.stdout()}\n${p.stderr()}`);
  const pids = [1, 2, 3].map((i) => pidIn(join(s.pidDir, `wick-${user}-worker-${i}.pid`)));
  assert.equal(new Set(pids).size, 3);
  assert.equal(readdirSync(s.logDir).filter((f) => /-worker-[123]-.*\.out$/.test(f)).length, 3);

  // Serving comes before registering: wait until the master has all three ALIVE.
  type SparkWorker = { port: number; state: string; webuiaddress: string };
  const workers = await waitFor(
    '3 workers ALIVE at the master',
    async () => {
      const status = await s.wick(['status', '--master', url, '--json'], {
        WICK_AUTH_SECRET: secret,
      });
      assert.equal(status.code, 0, status.stderr);
      const ws = (JSON.parse(status.stdout) as { workers: SparkWorker[] }).workers;
      return ws.filter((w) => w.state === 'ALIVE').length === 3 ? ws : undefined;
    },
    60_000,
  );
  assert.deepEqual(
    workers.map((w) => w.port).sort(),
    [rpc.base, rpc.base + 1, rpc.base + 2],
    'RPC ports counted up from the base',
  );
  assert.deepEqual(
    workers.map((w) => w.state),
    ['ALIVE', 'ALIVE', 'ALIVE'],
  );
  assert.deepEqual(
    workers.map((w) => Number(new URL(w.webuiaddress).port)).sort(),
    [ui.base, ui.base + 1, ui.base + 2],
    'web UI ports counted up from the base',
  );

  // Neither daemon holds the secret on its command line or in its environment, nor logs it.
  for (const pid of [...pids, pidIn(join(s.pidDir, `wick-${user}-master-1.pid`))]) {
    assert.ok(!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(secret), `cmdline of ${pid}`);
    assert.ok(!readFileSync(`/proc/${pid}/environ`, 'utf8').includes(secret), `environ of ${pid}`);
  }
  for (const f of readdirSync(s.logDir)) {
    assert.ok(!readFileSync(join(s.logDir, f), 'utf8').includes(secret), `log ${f}`);
  }

  const stopped = await s.wick(['stop-worker']);
  assert.equal(stopped.code, 0, stopped.stderr);
  for (const [i, pid] of pids.entries())
    assert.match(
      stopped.stdout,
      new RegExp(`stopped worker${i === 0 ? '' : ` ${i + 1}`} \\(process ${pid}\\)`),
    );
  assert.deepEqual(await waitUntilGone(pids, 1), []);
  assert.deepEqual(
    readdirSync(s.pidDir).filter((f) => f.includes('worker')),
    [],
  );
  assert.equal((await s.wick(['stop-master'])).code, 0);
  assert.deepEqual(
    await waitUntilGone(
      markedProcesses(s.mark).map((m) => m.pid),
      10_000,
    ),
    [],
  );
});

test('--instances and WICK_WORKER_INSTANCES are checked: a bad count is named', async (t) => {
  const s = sandbox(t);
  const r = await s.wick(['start-worker', 'wick://127.0.0.1:1'], {
    WICK_WORKER_INSTANCES: 'three',
  });
  assert.equal(r.code, 1);
  assert.match(
    r.stderr,
    /WICK_WORKER_INSTANCES is "three": expected a whole number of workers from 1 to 64/,
  );
  const spark = await s.wick(['start-worker', 'wick://127.0.0.1:1', '--instances', '0']);
  assert.match(spark.stderr, /--instances is "0"/);
});

test('stop-master SIGKILLs a master that is still there after wick.daemon.stopTimeout', async (t) => {
  const s = sandbox(t);
  assert.equal((await s.wick(['start-master', ...MASTER_ARGS])).code, 0);
  const pid = pidIn(join(s.pidDir, `wick-${user}-master-1.pid`));
  // A stopped process cannot act on SIGTERM: only SIGKILL ends it.
  process.kill(pid, 'SIGSTOP');
  const r = await s.wick(['stop-master', '--conf', 'wick.daemon.stopTimeout=1s']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(
    r.stdout,
    new RegExp(
      `stopped master \\(process ${pid}, killed with SIGKILL after wick.daemon.stopTimeout\\)`,
    ),
  );
  assert.equal(isAlive(pid), false);
});

test('start-all with no conf/workers starts a master and a worker on this machine without ssh; stop-all stops both', async (t) => {
  const s = sandbox(t);
  const env = {
    WICK_CONF_DIR: join(s.dir, 'conf'),
    WICK_MASTER_HOST: '127.0.0.1',
    WICK_MASTER_PORT: '0',
    WICK_MASTER_WEBUI_PORT: '0',
    WICK_WORKER_HOST: '127.0.0.1',
    WICK_WORKER_WEBUI_PORT: '0',
    WICK_WORKER_CORES: '1',
    WICK_WORKER_MEMORY: '256m',
    WICK_WORKER_DIR: join(s.dir, 'work'),
    // ssh is never run for localhost: one that would fail shows it.
    WICK_SSH_OPTS: '-o ProxyCommand=false',
  };
  const r = await s.wick(['start-all'], env);
  assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
  const url = masterUrlOf(r);
  assert.match(r.stdout, /^localhost: started worker \(process \d+\) as worker-/m);
  const status = await waitFor(
    'the worker ALIVE',
    async () => {
      const st = await s.wick(['status', '--master', url], env);
      return / ALIVE /.test(st.stdout.split('\n').slice(1).join('\n')) ? st.stdout : undefined;
    },
    60_000,
  );
  assert.match(status, /Workers: 1 alive of 1/);
  const pids = ['master', 'worker'].map((d) => pidIn(join(s.pidDir, `wick-${user}-${d}-1.pid`)));
  assert.ok(pids.every(isAlive), 'a master and a worker');
  const stopped = await s.wick(['stop-all'], env);
  assert.equal(stopped.code, 0, stopped.stderr);
  assert.match(stopped.stdout, /^localhost: stopped worker \(process \d+\)/m);
  assert.match(stopped.stdout, /^stopped master \(process \d+\)/m);
  assert.deepEqual(await waitUntilGone(pids, 1), []);
  // The worker's executors (its prestarted one) go with it.
  assert.deepEqual(
    await waitUntilGone(
      markedProcesses(s.mark).map((p) => p.pid),
      10_000,
    ),
    [],
  );
});

test('--secret-stdin with nothing on stdin is refused before anything starts', async (t) => {
  const s = sandbox(t);
  const r = await s.wick(['start-worker', 'wick://127.0.0.1:1', '--secret-stdin']);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /--secret-stdin: stdin holds no secret/);
  assert.equal(existsSync(s.pidDir), false, 'no pid dir made, no daemon started');
  assert.deepEqual(markedProcesses(s.mark), []);
});
