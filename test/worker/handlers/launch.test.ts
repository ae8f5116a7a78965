/**
 * Master → Worker: LaunchExecutor / KillExecutor / LaunchDriver / KillDriver / ApplicationFinished
 * on a real Worker endpoint with real children, sent by a mock master over loopback. Only the
 * active master is obeyed; cores and memory are accounted; a kill leaves no process behind; an
 * application's local dirs go when it finishes, its logs stay.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import {
  ApplicationFinished,
  KillDriver,
  KillExecutor,
  LaunchDriver,
} from '../../../backend/protocol/deploy.js';
import { RequestWorkerState } from '../../../backend/protocol/worker.js';
import { checkNothingLeftRunning } from '../../helpers/leaks.js';
import { isAlive, killByToken, pgrep, readPids, waitFor } from '../../helpers/processes.js';
import {
  app,
  driverLaunch,
  logLines,
  MockMaster as Mock,
  type MockMaster,
  nodeApp,
  registeredWorker,
} from '../../helpers/workerHarness.js';

checkNothingLeftRunning();

const APP = 'app-20261130120000-0001';

/**
 * bash whose root ends at once on SIGTERM while a child of it takes 0.4 s to: the kill is over
 * only when that child has ended too. Each writes its pid to `pids`.
 */
function slowToDieTree(tok: string): string {
  return [
    `bash -c 'trap "sleep 0.4; exit 0" TERM; echo $$ >> pids; while :; do sleep 0.05; done' ${tok}-slow &`,
    `echo $$ >> pids; exec -a ${tok}-top sleep 300`,
  ].join('\n');
}

function viaMaster(master: MockMaster) {
  return master.worker().ask(RequestWorkerState({}));
}

/** A token for pgrep, and cleanup of anything carrying it if the test fails. */
function token(t: TestContext): string {
  const tok = `wicktest-${randomBytes(6).toString('hex')}`;
  t.after(() => killByToken(tok));
  return tok;
}

/**
 * bash that leaves every kind of escapee: a setsid grandchild, an orphan, a double-forked daemon;
 * each writes its pid to `pids` in the executor's directory, then the child itself.
 */
function escapingTree(tok: string): string[] {
  return [
    'bash',
    '-c',
    [
      `setsid bash -c 'echo $$ >> pids; exec -a ${tok}-a sleep 300' &`,
      `bash -c '(exec -a ${tok}-b sleep 300) & echo $! >> pids'`,
      `setsid bash -c '(exec -a ${tok}-d sleep 300) & echo $! >> pids' &`,
      `echo $$ >> pids; exec -a ${tok}-top sleep 300`,
    ].join('\n'),
  ];
}

async function setup(t: TestContext, conf: Record<string, string> = {}) {
  const m = await Mock.start(t);
  const w = await registeredWorker(t, m, { conf, cores: 4, memoryMB: 2048 });
  return { m, w };
}

test('LaunchExecutor: RUNNING, then EXITED with the exit code; its logs in work/<appId>/<execId>/', async (t) => {
  const { m, w } = await setup(t);
  await m.launchRunning(APP, 0, nodeApp("console.log('out'); process.exitCode = 4"));
  const exited = await m.executorState(APP, 0, 'EXITED');
  assert.deepEqual(exited, {
    type: 'ExecutorStateChanged',
    appId: APP,
    execId: 0,
    state: 'EXITED',
    message: 'Command exited with code 4',
    exitStatus: 4,
  });
  const dir = join(w.workDir, APP, '0');
  assert.equal(readFileSync(join(dir, 'stdout'), 'utf8'), 'out\n');
  assert.match(readFileSync(join(dir, 'stderr'), 'utf8'), /^Wick Executor Command: /);
  const state = await w.state();
  assert.equal(state.executors.length, 0);
  assert.equal(state.finishedExecutors[0]?.state, 'EXITED');
  assert.equal(state.finishedExecutors[0]?.exitCode, 4);
  assert.equal(state.finishedExecutors[0]?.dir, dir);
});

test('a launch that cannot start is FAILED with the reason', async (t) => {
  const { m } = await setup(t);
  m.launchExecutor(APP, 0, app(['/nonexistent/executor-binary']));
  const failed = await m.executorState(APP, 0, 'FAILED');
  assert.match(failed.message as string, /\/nonexistent\/executor-binary/);
  assert.equal(m.rec.all('ExecutorStateChanged').length, 1, 'never RUNNING');
});

test('LaunchExecutor and KillExecutor from a master that is not the active one are ignored', async (t) => {
  const { m, w } = await setup(t);
  const tok = token(t);
  const from = m.rec.mark;
  m.launchExecutor(APP, 1, app(['bash', '-c', `exec -a ${tok} sleep 300`]), {
    masterUrl: 'wick://10.0.0.1:7077',
  });
  // Handled in order: by the time executor 2 runs, the impostor's launch was handled too.
  await m.launchRunning(APP, 2, app(['sleep', '300']));
  assert.deepEqual(
    m.rec.all('ExecutorStateChanged', from).map((x) => x.execId),
    [2],
  );
  assert.equal(existsSync(join(w.workDir, APP, '1')), false);
  assert.deepEqual(pgrep(tok), []);
  assert.ok(logLines.some((l) => l.includes('Invalid Master (wick://10.0.0.1:7077)')));

  m.worker().send(KillExecutor({ masterUrl: 'wick://10.0.0.1:7077', appId: APP, execId: 2 }));
  const state = await viaMaster(m);
  assert.deepEqual(
    state.executors.map((e) => [e.execId, e.state]),
    [[2, 'RUNNING']],
  );
});

test('cores and memory are accounted while executors run and freed when they end', async (t) => {
  const { m, w } = await setup(t);
  await m.launchRunning(APP, 0, app(['sleep', '300']), { cores: 1, memory: 128 });
  await m.launchRunning(APP, 1, app(['sleep', '300']), { cores: 2, memory: 512 });
  let s = await w.state();
  assert.deepEqual([s.cores, s.memory, s.coresUsed, s.memoryUsed], [4, 2048, 3, 640]);
  assert.deepEqual(
    s.executors.map((e) => [e.execId, e.cores, e.memory, e.state]),
    [
      [0, 1, 128, 'RUNNING'],
      [1, 2, 512, 'RUNNING'],
    ],
  );
  assert.ok(s.executors.every((e) => (e.pid ?? 0) > 0));

  m.worker().send(KillExecutor({ masterUrl: m.url, appId: APP, execId: 1 }));
  await m.executorState(APP, 1, 'KILLED');
  s = await w.state();
  assert.deepEqual([s.coresUsed, s.memoryUsed], [1, 128]);
  assert.deepEqual(
    s.finishedExecutors.map((e) => [e.execId, e.state]),
    [[1, 'KILLED']],
  );

  // A second launch of a running executor changes nothing.
  const from = m.rec.mark;
  m.launchExecutor(APP, 0, app(['sleep', '300']), { cores: 3, memory: 1000 });
  s = await viaMaster(m);
  assert.deepEqual([s.coresUsed, s.memoryUsed], [1, 128]);
  assert.equal(m.rec.all('ExecutorStateChanged', from).length, 0);

  m.worker().send(KillExecutor({ masterUrl: m.url, appId: APP, execId: 0 }));
  await m.executorState(APP, 0, 'KILLED');
  s = await w.state();
  assert.deepEqual([s.coresUsed, s.memoryUsed], [0, 0]);
});

test('KillExecutor kills the whole tree, escaped grandchildren included: zero survivors', async (t) => {
  const { m, w } = await setup(t, { 'wick.worker.killTimeout': '500ms' });
  const tok = token(t);
  await m.launchRunning(APP, 0, app(escapingTree(tok)));
  const pids = await readPids(join(w.workDir, APP, '0', 'pids'), 4, t.signal);
  assert.equal(pgrep(tok).length, 4);
  m.worker().send(KillExecutor({ masterUrl: m.url, appId: APP, execId: 0 }));
  const killed = await m.executorState(APP, 0, 'KILLED');
  assert.equal(killed.exitStatus, 143);
  assert.deepEqual(pgrep(tok), []);
  for (const pid of pids) assert.equal(isAlive(pid), false, `pid ${pid} survived`);
});

test('KILLED is reported once the whole tree has ended, not when its first process does', async (t) => {
  const { m, w } = await setup(t, { 'wick.worker.killTimeout': '5s' });
  const tok = token(t);
  await m.launchRunning(APP, 0, app(['bash', '-c', slowToDieTree(`${tok}-e`)]));
  const appPath = join(w.root, 'driver.sh');
  writeFileSync(appPath, slowToDieTree(`${tok}-d`));
  const driverId = 'driver-20261130120000-0005';
  m.worker().send(driverLaunch(driverId, appPath, { argv: ['bash', '{{USER_APP}}'] }));
  await readPids(join(w.workDir, APP, '0', 'pids'), 2, t.signal);
  await readPids(join(w.workDir, driverId, 'pids'), 2, t.signal);
  const from = m.rec.mark;
  m.worker().send(KillExecutor({ masterUrl: m.url, appId: APP, execId: 0 }));
  await m.executorState(APP, 0, 'KILLED');
  assert.deepEqual(
    pgrep(`${tok}-e`),
    [],
    'the executor reported KILLED with part of its tree alive',
  );
  m.worker().send(KillDriver({ driverId }));
  assert.equal((await m.rec.next('DriverStateChanged', undefined, from)).state, 'KILLED');
  assert.deepEqual(pgrep(`${tok}-d`), [], 'the driver reported KILLED with part of its tree alive');
});

test('stopping the worker kills every executor and driver tree first: zero survivors', async (t) => {
  const { m, w } = await setup(t, { 'wick.worker.killTimeout': '500ms' });
  const tok = token(t);
  await m.launchRunning(APP, 0, app(escapingTree(`${tok}-e0`)));
  // This one ignores SIGTERM, so the worker has to wait for the grace period and SIGKILL it.
  await m.launchRunning(
    APP,
    1,
    app(['bash', '-c', `trap '' TERM; ${escapingTree(`${tok}-e1`)[2]}`]),
  );
  const appPath = join(w.root, 'driver.sh');
  writeFileSync(appPath, escapingTree(`${tok}-drv`)[2] as string);
  m.worker().send(
    driverLaunch('driver-20261130120000-0001', appPath, {
      argv: ['bash', '{{USER_APP}}'],
      supervise: true,
    }),
  );
  const pids = [
    ...(await readPids(join(w.workDir, APP, '0', 'pids'), 4, t.signal)),
    ...(await readPids(join(w.workDir, APP, '1', 'pids'), 4, t.signal)),
    ...(await readPids(join(w.workDir, 'driver-20261130120000-0001', 'pids'), 4, t.signal)),
  ];
  assert.equal(pgrep(tok).length, 12);
  await w.env.stop();
  assert.deepEqual(pgrep(tok), []);
  for (const pid of pids) assert.equal(isAlive(pid), false, `pid ${pid} survived`);
});

test('an executor that exits by itself leaves nothing behind either', async (t) => {
  const { m, w } = await setup(t);
  const tok = token(t);
  const script = (escapingTree(tok)[2] as string).replace(
    /exec -a \S+ sleep 300$/,
    // The same escapees, but the executor's own process exits once they are all started.
    'while [ "$(wc -l < pids)" -lt 4 ]; do sleep 0.01; done; exit 0',
  );
  await m.launchRunning(APP, 0, app(['bash', '-c', script]));
  const exited = await m.executorState(APP, 0, 'EXITED');
  assert.equal(exited.exitStatus, 0);
  const pids = await readPids(join(w.workDir, APP, '0', 'pids'), 4);
  assert.deepEqual(pgrep(tok), []);
  for (const pid of pids) assert.equal(isAlive(pid), false, `pid ${pid} survived`);
});

test("ApplicationFinished deletes the app's local dirs but not its logs", async (t) => {
  const { m, w } = await setup(t);
  const script = `
    const dirs = process.env.WICK_EXECUTOR_DIRS.split(require('path').delimiter);
    for (const d of dirs) require('fs').writeFileSync(d + '/shuffle.data', 'x');
    console.log(JSON.stringify(dirs));`;
  await m.launchRunning(APP, 0, nodeApp(script));
  await m.executorState(APP, 0, 'EXITED');
  const dirs = JSON.parse(readFileSync(join(w.workDir, APP, '0', 'stdout'), 'utf8')) as string[];
  assert.equal(dirs.length, 1);
  assert.ok(dirs[0]?.startsWith(join(w.localDir, `wick-executor-${APP}-`)), dirs[0]);
  assert.ok(existsSync(join(dirs[0] as string, 'shuffle.data')));

  m.worker().send(ApplicationFinished({ id: APP }));
  await viaMaster(m);
  assert.equal(existsSync(dirs[0] as string), false, 'local dir deleted');
  assert.deepEqual(readdirSync(w.localDir), []);
  assert.ok(existsSync(join(w.workDir, APP, '0', 'stdout')), 'logs kept');
  assert.ok(existsSync(join(w.workDir, APP, '0', 'stderr')), 'logs kept');
});

test("a worker that stops deletes its applications' local dirs, finished or not", async (t) => {
  const { m, w } = await setup(t);
  const other = 'app-20261130120000-0003';
  await m.launchRunning(APP, 0, nodeApp("console.log('done')"));
  await m.executorState(APP, 0, 'EXITED');
  await m.launchRunning(other, 0, app(['sleep', '300']));
  assert.equal(readdirSync(w.localDir).length, 2, 'one local dir per application');
  // One application has finished, and its dirs are being deleted as the worker stops; the master
  // never said so of the other. An embedded cluster stopped right after its last application
  // does this, and its worker's process exits as soon as the stop returns.
  m.worker().send(ApplicationFinished({ id: APP }));
  await w.env.stop();
  assert.deepEqual(readdirSync(w.localDir), []);
});

test('ApplicationFinished while an executor still runs: the dirs go once it has ended', async (t) => {
  const { m, w } = await setup(t);
  const other = 'app-20261130120000-0002';
  await m.launchRunning(APP, 0, app(['sleep', '300']));
  await m.launchRunning(other, 0, app(['sleep', '300']));
  const dirs = () => readdirSync(w.localDir).sort();
  assert.equal(dirs().length, 2);
  const mine = dirs().find((d) => d.includes(APP)) as string;

  m.worker().send(ApplicationFinished({ id: APP }));
  await viaMaster(m);
  assert.equal(dirs().length, 2, 'kept while its executor runs');
  m.worker().send(KillExecutor({ masterUrl: m.url, appId: APP, execId: 0 }));
  await m.executorState(APP, 0, 'KILLED');
  await waitFor('the local dir to go', () => !dirs().includes(mine), t.signal);
  assert.deepEqual(
    dirs().map((d) => d.includes(other)),
    [true],
    "the other application's dir stays",
  );
});

test('LaunchDriver and KillDriver: DriverStateChanged to the master, resources accounted', async (t) => {
  const { m, w } = await setup(t);
  const appPath = join(w.root, 'app.js');
  writeFileSync(appPath, 'setInterval(() => {}, 1000)');
  const driverId = 'driver-20261130120000-0003';
  m.worker().send(
    LaunchDriver({
      driverId,
      driverDesc: {
        appPath,
        mem: 300,
        cores: 2,
        supervise: false,
        command: { argv: [process.execPath, '{{USER_APP}}'], env: {} },
      },
    }),
  );
  let s = await viaMaster(m);
  assert.deepEqual([s.coresUsed, s.memoryUsed], [2, 300]);
  assert.deepEqual(
    s.drivers.map((d) => d.driverId),
    [driverId],
  );
  await waitFor(
    'the driver process',
    async () => ((await w.state()).drivers[0]?.pid ?? 0) > 0,
    t.signal,
  );
  m.worker().send(KillDriver({ driverId }));
  const changed = await m.rec.next('DriverStateChanged');
  assert.deepEqual(changed, { type: 'DriverStateChanged', driverId, state: 'KILLED' });
  s = await w.state();
  assert.deepEqual([s.coresUsed, s.memoryUsed], [0, 0]);
  assert.deepEqual(
    s.finishedDrivers.map((d) => [d.driverId, d.state]),
    [[driverId, 'KILLED']],
  );
});

test('a driver whose app file is missing ends as ERROR with the reason', async (t) => {
  const { m, w } = await setup(t);
  m.worker().send(
    LaunchDriver({
      driverId: 'driver-20261130120000-0004',
      driverDesc: {
        appPath: join(w.root, 'missing.jar'),
        mem: 64,
        cores: 1,
        supervise: true,
        command: { argv: [process.execPath, '{{USER_APP}}'], env: {} },
      },
    }),
  );
  const changed = await m.rec.next('DriverStateChanged');
  assert.equal(changed.state, 'ERROR');
  assert.match(changed.exception as string, /missing\.jar/);
});

test('finished executors are kept up to wick.worker.ui.retainedExecutors, the oldest dropped', async (t) => {
  const { m, w } = await setup(t, { 'wick.worker.ui.retainedExecutors': '2' });
  for (const execId of [0, 1, 2]) {
    await m.launchRunning(APP, execId, nodeApp('0'));
    await m.executorState(APP, execId, 'EXITED');
  }
  const s = await w.state();
  assert.deepEqual(
    s.finishedExecutors.map((e) => e.execId),
    [1, 2],
  );
});
