/**
 * `wick submit`, `wick status ID` and `wick kill ID` as a user runs them, against one real local
 * cluster (a master and 2 workers × 1 core) shared by the tests of this file: SparkPi in both
 * deploy modes, modules next to the application, an application that ends without stop(), the
 * free-variable check, killing an application and a supervised driver, and each bad input with
 * its message and exit code. Each test checks that its application left no process behind.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import {
  AppDir,
  appIdIn,
  eventually,
  killWhenDone,
  type SharedCluster,
  startSharedCluster,
} from '../helpers/apps.js';
import { markedProcesses, runWick, startWick } from '../helpers/cli.js';
import { startMaster } from '../helpers/cluster.js';
import { unusedPort } from '../helpers/net.js';

let cluster: SharedCluster;
const apps = new AppDir();
const pi = join(import.meta.dirname, '..', '..', 'examples', 'pi.ts');

before(async () => {
  cluster = await startSharedCluster();
});

after(async () => {
  await cluster?.stop();
  apps.remove();
});

function submit(args: string[], env?: NodeJS.ProcessEnv) {
  return runWick(['submit', '--master', cluster.url, ...args], { mark: cluster.mark, env });
}

function piOf(stdout: string): number {
  const m = /Pi is roughly (\d+\.\d+)/.exec(stdout);
  assert.ok(m, `no "Pi is roughly" in:\n${stdout}`);
  return Number(m[1]);
}

/** An application whose two tasks block until they are killed. */
const sleepyTasks = (name: string) => `
import { WickContext } from 'wick';
const wc = await WickContext.create({ appName: '${name}' });
// Each task blocks its thread (without using the CPU) until the test kills it.
await wc
  .parallelize([1, 2], 2)
  .map((x: number) => {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 120_000);
    return x;
  })
  .collect();
console.log('the job ended');
await wc.stop();
`;

const freeVariable = `
import { WickContext } from 'wick';
const wc = await WickContext.create({ appName: 'free variable' });
const factor = 3;
const out = await wc.parallelize([1, 2, 3], 2).map((x: number) => x * factor).collect();
console.log(out);
await wc.stop();
`;

test('SparkPi in client mode: Pi within 0.01 of π, the app FINISHED, nothing left behind', {
  timeout: 60_000,
}, async () => {
  const r = await submit([pi, '10']);
  assert.equal(r.code, 0, r.stderr);
  assert.ok(Math.abs(piOf(r.stdout) - Math.PI) < 0.01, r.stdout);
  const appId = appIdIn(r.stderr);
  assert.ok(appId, r.stderr);
  const s = await cluster.watch.waitFor((s) => cluster.watch.app(s, appId)?.state === 'FINISHED');
  // Both workers ran an executor for it.
  const removed = cluster.watch.app(s, appId)?.removedExecutors ?? [];
  assert.equal(removed.length, 2, JSON.stringify(removed, null, 1));
  assert.match(cluster.executorOutput(appId), /INFO Executor: Finished task 0\.0 in stage 0\.0/);
  await cluster.assertOnlyClusterLeft();
});

test('with --exit-with-parent (as the VS Code agent runs it), submit exits once its application is done', {
  timeout: 60_000,
}, async (t) => {
  // startWick's stdin is a pipe that stays open: the parent is still there.
  const w = startWick(['submit', '--exit-with-parent', '--master', cluster.url, pi, '4'], {
    mark: cluster.mark,
  });
  killWhenDone(t, w);
  let timer: NodeJS.Timeout | undefined;
  const r = await Promise.race([
    w.exited,
    new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`still running 30 s on; stdout:\n${w.stdout()}`)),
        30_000,
      );
    }),
  ]).finally(() => clearTimeout(timer));
  assert.equal(r.code, 0, w.stderr());
  assert.ok(Math.abs(piOf(w.stdout()) - Math.PI) < 0.1, w.stdout());
  await cluster.assertOnlyClusterLeft();
});

test('SparkPi with --master local: an embedded cluster runs it and leaves no process or folder behind', {
  timeout: 60_000,
}, async () => {
  const mark = randomUUID();
  const p = startWick(['submit', '--master', 'local', pi, '10'], { mark });
  p.child.stdin?.end();
  const { code } = await p.exited;
  assert.equal(code, 0, p.stderr());
  assert.ok(Math.abs(piOf(p.stdout()) - Math.PI) < 0.01, p.stdout());
  assert.match(p.stderr(), /Starting an embedded local cluster/);
  assert.deepEqual(markedProcesses(mark), [], 'processes left by the embedded cluster');
  assert.equal(existsSync(join(tmpdir(), `wick-local-${p.pid}`)), false, 'its work dir is removed');
});

test('SparkPi in cluster mode with --wait: the driver’s output is followed, its status is the exit code', {
  timeout: 60_000,
}, async () => {
  const r = await submit(['--deploy-mode', 'cluster', '--wait', pi, '10']);
  assert.equal(r.code, 0, r.stderr);
  const [driverId] = r.stdout.split('\n');
  assert.match(driverId ?? '', /^driver-\d{14}-\d{4}$/);
  assert.ok(Math.abs(piOf(r.stdout) - Math.PI) < 0.01, r.stdout);
  assert.match(r.stderr, new RegExp(`Driver ${driverId} ended FINISHED`));
  const s = await cluster.watch.waitFor(
    (s) => cluster.watch.driver(s, driverId as string)?.state === 'FINISHED',
  );
  assert.equal(s.activeApps.length, 0);
  await cluster.assertOnlyClusterLeft();

  // A driver that fails: submit exits 1 and says so.
  const bad = await submit([
    '--deploy-mode',
    'cluster',
    '--wait',
    apps.write('cluster-free-variable.ts', freeVariable),
  ]);
  assert.equal(bad.code, 1, bad.stderr);
  assert.match(bad.stderr, /Driver driver-\S+ ended FAILED/);
  await cluster.assertOnlyClusterLeft();
});

test('the free-variable check fails the submit fast, naming the variable, before any task runs', {
  timeout: 60_000,
}, async () => {
  const r = await submit([apps.write('free-variable.ts', freeVariable)]);
  assert.equal(r.code, 1);
  assert.match(
    r.stderr,
    /wick: ClosureError: The function given to map uses factor, a top-level variable of the application's main file, which executors do not run: pass the value explicitly, e\.g\. map\(\(x, env\) => … env\.factor …, \{ factor \}\)/,
  );
  assert.doesNotMatch(r.stdout, /\[/, 'the job never ran');
  const appId = appIdIn(r.stderr);
  assert.ok(appId, r.stderr);
  // The driver threw before stop(): it ends the application FAILED, saying why.
  const s = await cluster.watch.waitFor((s) => cluster.watch.app(s, appId)?.state === 'FAILED');
  assert.match(
    cluster.watch.app(s, appId)?.failure?.message ?? '',
    /^ClosureError: The function given to map uses factor/,
  );
  await cluster.assertOnlyClusterLeft();
  assert.doesNotMatch(cluster.executorOutput(appId), /Running task/);
});

test('functions require() and import() modules next to the application', {
  timeout: 60_000,
}, async () => {
  const dir = join(apps.path, 'with-modules');
  mkdirSync(dir);
  writeFileSync(join(dir, 'helper.cjs'), 'exports.double = (x) => x * 2;\n');
  writeFileSync(join(dir, 'helper.mjs'), 'export const triple = (x) => x * 3;\n');
  writeFileSync(
    join(dir, 'app.ts'),
    `
import { WickContext } from 'wick';
const wc = await WickContext.create({ appName: 'modules' });
const doubled = await wc
  .parallelize([1, 2, 3], 2)
  .map((x: number) => require('./helper.cjs').double(x))
  .collect();
const tripled = await wc
  .parallelize([1, 2, 3], 2)
  .mapPartitions(async (xs: number[]) => {
    const { triple } = await import('./helper.mjs');
    return xs.map(triple);
  })
  .collect();
console.log(JSON.stringify({ doubled, tripled }));
await wc.stop();
`,
  );
  // Run from elsewhere: what counts is the application's folder, not the current one.
  const r = await submit([join(dir, 'app.ts')]);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout.trim()), { doubled: [2, 4, 6], tripled: [3, 6, 9] });
  await cluster.assertOnlyClusterLeft();
});

test('what an application does after stop() runs: stop() keeps the process alive until it is done', {
  timeout: 60_000,
}, async () => {
  const app = apps.write(
    'after-stop.mjs',
    `
import { WickContext } from 'wick';
const wc = await WickContext.create({ appName: 'after stop' });
const count = await wc.range(0, 100, 1, 4).count();
await wc.stop();
console.log('count', count, 'after stop');
`,
  );
  for (let i = 0; i < 3; i++) {
    const r = await submit([app]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), 'count 100 after stop', `run ${i + 1}:\n${r.stderr}`);
    const appId = appIdIn(r.stderr);
    assert.ok(appId);
    await cluster.watch.waitFor((s) => cluster.watch.app(s, appId)?.state === 'FINISHED');
  }
  await cluster.assertOnlyClusterLeft();
});

test('a driver that ends without stop(), or exits, still unregisters: the app is FINISHED', {
  timeout: 60_000,
}, async () => {
  const ends = apps.write(
    'no-stop.mjs',
    `
import { WickContext } from 'wick';
const wc = await WickContext.create({ appName: 'no stop' });
console.log('count', await wc.range(0, 100, 1, 2).count());
`,
  );
  const exits = apps.write(
    'exits.mjs',
    `
import { WickContext } from 'wick';
const wc = await WickContext.create({ appName: 'exits' });
console.log('count', await wc.range(0, 10, 1, 2).count());
process.exit(0);
`,
  );
  for (const [app, expected] of [
    [ends, 'count 100'],
    [exits, 'count 10'],
  ] as const) {
    const r = await submit([app]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), expected);
    const appId = appIdIn(r.stderr);
    assert.ok(appId);
    await cluster.watch.waitFor((s) => cluster.watch.app(s, appId)?.state === 'FINISHED');
    await cluster.assertOnlyClusterLeft();
  }
});

test('an app asking more memory per executor than any worker has waits, and `wick status ID` says why', {
  timeout: 60_000,
}, async (t) => {
  const p = startWick(
    [
      'submit',
      '--master',
      cluster.url,
      '--executor-memory',
      '2g',
      apps.write('hungry.ts', sleepyTasks('hungry')),
    ],
    { mark: cluster.mark },
  );
  killWhenDone(t, p);
  const appId = await eventually(t.signal, () => appIdIn(p.stderr()));
  await cluster.watch.waitFor((s) => cluster.watch.app(s, appId)?.waitingReason !== undefined);
  const status = await runWick(['status', appId, '--master', cluster.url]);
  assert.equal(status.code, 0, status.stderr);
  assert.match(status.stdout, new RegExp(`^${appId}  hungry  WAITING  cores 0`));
  assert.match(
    status.stdout,
    /waiting: each executor asks for 2048 MiB but the largest worker has 1024 MiB \(lower wick\.executor\.memory or add a bigger worker\)/,
  );
  const json = await runWick(['status', appId, '--json', '--master', cluster.url]);
  assert.equal(JSON.parse(json.stdout).state, 'WAITING');
  const unknown = await runWick(['status', 'app-20000101000000-9999', '--master', cluster.url]);
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /knows no application or driver "app-20000101000000-9999"/);

  const kill = await runWick(['kill', appId, '--master', cluster.url]);
  assert.equal(kill.code, 0, kill.stderr);
  const { code } = await p.exited;
  assert.equal(code, 1);
  assert.match(p.stderr(), /Master removed our application: KILLED/);
  await cluster.assertOnlyClusterLeft();
});

test('wick kill app-…: the running app is KILLED, its driver fails, its executors are gone', {
  timeout: 60_000,
}, async (t) => {
  const p = startWick(
    ['submit', '--master', cluster.url, apps.write('sleepy.ts', sleepyTasks('sleepy'))],
    {
      mark: cluster.mark,
    },
  );
  killWhenDone(t, p);
  const appId = await eventually(t.signal, () => appIdIn(p.stderr()));
  // Both tasks run, one on each executor.
  await eventually(t.signal, () =>
    (cluster.executorOutput(appId).match(/Running task/g) ?? []).length === 2 ? true : undefined,
  );
  const executors = cluster.others().filter((x) => x.cmdline.includes(appId));
  assert.equal(executors.length, 2, JSON.stringify(cluster.others()));

  const kill = await runWick(['kill', appId, '--master', cluster.url]);
  assert.equal(kill.code, 0, kill.stderr);
  assert.equal(kill.stdout.trim(), `Killed application ${appId}`);
  const { code } = await p.exited;
  assert.equal(code, 1);
  assert.match(p.stderr(), /Master removed our application: KILLED/);
  assert.doesNotMatch(p.stdout(), /the job ended/);
  const s = await cluster.watch.waitFor((s) => cluster.watch.app(s, appId)?.state === 'KILLED');
  assert.deepEqual(cluster.watch.app(s, appId)?.executors, []);
  await cluster.assertOnlyClusterLeft();
});

test('wick kill driver-…: a supervised driver is KILLED, not restarted, and leaves nothing', {
  timeout: 60_000,
}, async (t) => {
  const r = await submit([
    '--deploy-mode',
    'cluster',
    '--supervise',
    apps.write('supervised.ts', sleepyTasks('supervised')),
  ]);
  assert.equal(r.code, 0, r.stderr);
  const driverId = r.stdout.trim();
  assert.match(driverId, /^driver-/);
  assert.match(r.stderr, new RegExp(`Driver successfully submitted as ${driverId}`));
  // The driver runs its app, whose tasks run.
  const running = await cluster.watch.waitFor(
    (s) =>
      cluster.watch.driver(s, driverId)?.state === 'RUNNING' &&
      s.activeApps.some((a) => a.name === 'supervised' && a.state === 'RUNNING'),
  );
  const appId = running.activeApps.find((a) => a.name === 'supervised')?.id as string;
  await eventually(t.signal, () =>
    /Running task/.test(cluster.executorOutput(appId)) ? true : undefined,
  );
  assert.ok(cluster.others().some((x) => x.cmdline.includes('driver-wrapper')));

  const kill = await runWick(['kill', driverId, '--master', cluster.url]);
  assert.equal(kill.code, 0, kill.stderr);
  assert.match(kill.stdout, new RegExp(`Kill request for ${driverId} submitted`));
  const s = await cluster.watch.waitFor(
    (s) =>
      cluster.watch.driver(s, driverId)?.state === 'KILLED' &&
      cluster.watch.app(s, appId)?.state === 'KILLED',
  );
  // Killed, not failed, whether the driver said so as it went or the worker's SIGKILL (after its
  // grace) came first: the master asked for the kill, and nothing is kept as a failure.
  assert.equal(cluster.watch.app(s, appId)?.failure, undefined);
  assert.deepEqual(s.activeDrivers, [], 'a killed driver is not relaunched');
  await cluster.assertOnlyClusterLeft();
});

test('wick kill driver-… of a driver that dies at SIGTERM without a word: its app is still KILLED', {
  timeout: 60_000,
}, async (t) => {
  // As a driver SIGKILLed before its SIGTERM handler could unregister: the master asked for the
  // kill, so the dropped connection is the kill, not a failure of the application.
  const app = sleepyTasks('dies at SIGTERM').replace(
    'await wc\n',
    "process.removeAllListeners('SIGTERM');\nprocess.on('SIGTERM', () => process.kill(process.pid, 'SIGKILL'));\nawait wc\n",
  );
  assert.match(app, /removeAllListeners/);
  const r = await submit(['--deploy-mode', 'cluster', apps.write('diesAtSigterm.ts', app)]);
  assert.equal(r.code, 0, r.stderr);
  const driverId = r.stdout.trim();
  const running = await cluster.watch.waitFor((s) =>
    s.activeApps.some((a) => a.name === 'dies at SIGTERM' && a.state === 'RUNNING'),
  );
  const appId = running.activeApps.find((a) => a.name === 'dies at SIGTERM')?.id as string;
  await eventually(t.signal, () =>
    /Running task/.test(cluster.executorOutput(appId)) ? true : undefined,
  );
  const kill = await runWick(['kill', driverId, '--master', cluster.url]);
  assert.equal(kill.code, 0, kill.stderr);
  const s = await cluster.watch.waitFor(
    (s) =>
      cluster.watch.driver(s, driverId)?.state === 'KILLED' &&
      ['KILLED', 'FAILED'].includes(cluster.watch.app(s, appId)?.state ?? ''),
  );
  assert.equal(cluster.watch.app(s, appId)?.state, 'KILLED');
  assert.equal(cluster.watch.app(s, appId)?.failure, undefined);
  await cluster.assertOnlyClusterLeft();
});

test('bad input: each fails fast with a clear message and exit code 1', {
  timeout: 60_000,
}, async () => {
  const closed = await unusedPort();
  const closed2 = await unusedPort();
  const unreachable = `wick://127.0.0.1:${closed},127.0.0.1:${closed2}`;
  const syntax = apps.write('syntax.ts', "import { WickContext } from 'wick';\n\nconst x = ;\n");
  const ok = apps.write('never-runs.mjs', 'console.log("ran")\n');
  const cases: [string, string[], RegExp, NodeJS.ProcessEnv?][] = [
    [
      'missing APP',
      ['--master', cluster.url, join(apps.path, 'nope.ts')],
      /^wick: Cannot read application \S+nope\.ts: ENOENT$/m,
    ],
    [
      'not an application file',
      ['--master', cluster.url, apps.write('notes.txt', 'hi')],
      /^wick: Application \S+notes\.txt must be a \.js, \.mjs or \.ts file, got "\.txt"$/m,
    ],
    [
      'a syntax error',
      ['--master', cluster.url, syntax],
      /^wick: Syntax error in \S*syntax\.ts:3:11: Unexpected ";"\n\/\S*syntax\.ts:3:11: error: Unexpected ";"$/m,
    ],
    [
      'an unreachable master (client mode)',
      ['--master', unreachable, ok.replace('never-runs', 'client')],
      /Cannot reach a master/,
    ],
    [
      'an unreachable master (cluster mode)',
      ['--master', unreachable, '--deploy-mode', 'cluster', ok],
      new RegExp(
        `^wick: Cannot reach a master\\. Tried:\\n  wick://127\\.0\\.0\\.1:${closed}: .+\\n  wick://127\\.0\\.0\\.1:${closed2}: .+\\nIs a master running\\?`,
        'm',
      ),
    ],
    ['no master', [ok], /^wick: A master URL must be set: pass --master/m],
    [
      '--executor-memory',
      ['--master', cluster.url, '--executor-memory', 'lots', ok],
      /^wick: Invalid --executor-memory "lots": /m,
    ],
    [
      '--executor-cores',
      ['--master', cluster.url, '--executor-cores', '0', ok],
      /^wick: Invalid --executor-cores "0": /m,
    ],
    [
      '--total-executor-cores',
      ['--master', cluster.url, '--total-executor-cores', 'many', ok],
      /^wick: Invalid --total-executor-cores "many": /m,
    ],
    [
      '--driver-memory',
      ['--master', cluster.url, '--driver-memory', '-1g', ok],
      /^wick: Invalid --driver-memory "-1g": /m,
    ],
    [
      '--conf without =',
      ['--master', cluster.url, '--conf', 'wick.task.maxFailures', ok],
      /^wick: Invalid --conf "wick\.task\.maxFailures": expected key=value/m,
    ],
    [
      '--deploy-mode',
      ['--master', cluster.url, '--deploy-mode', 'yarn', ok],
      /^wick: --deploy-mode must be "client" or "cluster", got "yarn"$/m,
    ],
    [
      'a bad wick.* value',
      [
        '--master',
        cluster.url,
        '--conf',
        'wick.task.maxFailures=none',
        ok.replace('never-runs', 'conf'),
      ],
      /wick\.task\.maxFailures/,
    ],
  ];
  writeFileSync(
    ok.replace('never-runs', 'client'),
    "import { WickContext } from 'wick';\nawait WickContext.create({ appName: 'x' });\n",
  );
  writeFileSync(
    ok.replace('never-runs', 'conf'),
    "import { WickContext } from 'wick';\nawait WickContext.create({ appName: 'x' });\n",
  );
  const results = await Promise.all(
    cases.map(([, args, , env]) => runWick(['submit', ...args], { mark: cluster.mark, env })),
  );
  for (const [i, [what, , expected]] of cases.entries()) {
    const r = results[i] as (typeof results)[number];
    assert.equal(r.code, 1, `${what}: exit code\n${r.stderr}`);
    assert.match(r.stderr, expected, what);
    assert.doesNotMatch(r.stdout, /ran/, what);
  }
  // The unreachable master in client mode lists both URLs too.
  const client = results[3] as (typeof results)[number];
  assert.match(client.stderr, new RegExp(`wick://127\\.0\\.0\\.1:${closed}: `));
  assert.match(client.stderr, new RegExp(`wick://127\\.0\\.0\\.1:${closed2}: `));
  await cluster.assertOnlyClusterLeft();
});

test('an unreadable APP is refused with the reason', {
  timeout: 30_000,
  skip: process.getuid?.() === 0 ? 'root can read a file whatever its mode' : false,
}, async () => {
  const app = apps.write('unreadable.mjs', 'console.log("ran")\n');
  chmodSync(app, 0o000);
  const r = await runWick(['submit', '--master', cluster.url, app], { mark: cluster.mark });
  assert.equal(r.code, 1);
  assert.match(r.stderr, /^wick: Cannot read application \S+unreadable\.mjs: EACCES$/m);
});

test('a master that is not ALIVE (still RECOVERING) refuses a cluster-mode submit, and submit says so', {
  timeout: 60_000,
}, async (t) => {
  // A recovery directory that names a worker which will never answer: the master stays
  // RECOVERING until the worker timeout, here far longer than the test.
  const dir = join(apps.path, 'recovery');
  mkdirSync(dir);
  const port = await unusedPort();
  const id = `worker-20260101000000-127.0.0.1-${port}`;
  writeFileSync(
    join(dir, `worker_${id}`),
    JSON.stringify({
      id,
      host: '127.0.0.1',
      port,
      cores: 1,
      memory: 1024,
      endpoint: { address: `127.0.0.1:${port}`, name: 'Worker' },
      webUiAddress: `http://127.0.0.1:${port}`,
    }),
  );
  const master = await startMaster(t, {
    conf: {
      'wick.deploy.recoveryMode': 'FILESYSTEM',
      'wick.deploy.recoveryDirectory': dir,
      'wick.worker.timeout': '600s',
    },
  });
  await master.waitForStderr(/New state: RECOVERING/);
  const r = await runWick(
    [
      'submit',
      '--master',
      master.url,
      '--deploy-mode',
      'cluster',
      apps.write('recovering.mjs', ''),
    ],
    { mark: cluster.mark },
  );
  assert.equal(r.code, 1);
  assert.match(
    r.stderr,
    /^wick: The master refused the driver: Current state is not alive: RECOVERING\. Can only accept driver submissions in ALIVE state\.$/m,
  );
});
