/**
 * `wick worker` as a real process (the bundle: run `npm run build` first; `npm test` does) against
 * a mock master in the test process: registration with fast retries set by --conf, giving up,
 * RegisterWorkerFailed, heartbeats, SIGTERM killing every child tree first, and a work dir it
 * cannot write.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { KillExecutor, LaunchDriver } from '../../backend/protocol/deploy.js';
import { Daemon, startWorker, wick } from '../helpers/cluster.js';
import { checkNothingLeftRunning } from '../helpers/leaks.js';
import { isAlive, killByToken, pgrep, readPids } from '../helpers/processes.js';
import { app, MockMaster } from '../helpers/workerHarness.js';

checkNothingLeftRunning();
test.after(() =>
  assert.deepEqual(
    Daemon.running().map((d) => d.pid),
    [],
    'daemons left',
  ),
);

const APP = 'app-20261130120000-0001';

const FAST = {
  'wick.worker.initialRegistrationInterval': '100ms',
  'wick.worker.prolongedRegistrationInterval': '100ms',
  'wick.worker.initialRegistrationRetries': '2',
  'wick.worker.maxRegistrationRetries': '3',
};

function token(t: TestContext): string {
  const tok = `wicktest-${randomBytes(6).toString('hex')}`;
  t.after(() => killByToken(tok));
  return tok;
}

test('registers with the master named on the command line, then heartbeats every timeout/4', async (t) => {
  const m = await MockMaster.start(t);
  const w = await startWorker(t, m.url, {
    cores: 3,
    memory: '768m',
    conf: { 'wick.worker.timeout': '400ms' },
  });
  const reg = await m.rec.next('RegisterWorker');
  assert.equal(reg.id, w.workerId);
  assert.deepEqual(
    [reg.host, reg.port, reg.cores, reg.memory],
    ['127.0.0.1', Number(w.address.split(':')[1]), 3, 768],
  );
  await m.rec.next('WorkerLatestState');
  // Every 100 ms: a few arrive without the test having to wait long.
  await m.rec.count('Heartbeat', 3);
  assert.ok(w.isRunning);
});

test('retries with the --conf intervals, then exits: "All masters are unresponsive! Giving up."', async (t) => {
  const m = await MockMaster.start(t);
  m.mode = 'ignore';
  const w = await startWorker(t, m.url, { conf: FAST });
  assert.equal(await w.exited, 1);
  assert.match(w.stderr, /All masters are unresponsive! Giving up\./);
  // The first attempt and maxRegistrationRetries (3) more.
  assert.equal(m.rec.all('RegisterWorker').length, 4);
  assert.equal(w.stderr.match(/Retrying connection to master \(attempt # \d\)/g)?.length, 3);
});

test('gives up too when no master listens at all', async (t) => {
  const w = await startWorker(t, 'wick://127.0.0.1:1', { conf: FAST });
  assert.equal(await w.exited, 1);
  assert.match(w.stderr, /Failed to connect to master 127\.0\.0\.1:1/);
  assert.match(w.stderr, /All masters are unresponsive! Giving up\./);
});

test('RegisterWorkerFailed ends the worker with the reason', async (t) => {
  const m = await MockMaster.start(t);
  m.mode = 'fail';
  m.failMessage = 'Duplicate worker ID';
  const w = await startWorker(t, m.url);
  assert.equal(await w.exited, 1);
  assert.match(w.stderr, /Worker registration failed: Duplicate worker ID/);
});

test('SIGTERM: the worker kills every executor and driver tree before it exits — zero survivors', async (t) => {
  const m = await MockMaster.start(t);
  const w = await startWorker(t, m.url, { conf: { 'wick.worker.killTimeout': '500ms' } });
  await m.rec.next('WorkerLatestState');
  const tok = token(t);
  const tree = (tag: string, ignoreTerm = false) =>
    [
      ignoreTerm ? `trap '' TERM` : '',
      `setsid bash -c 'echo $$ >> pids; exec -a ${tok}-${tag}-a sleep 300' &`,
      `bash -c '(exec -a ${tok}-${tag}-b sleep 300) & echo $! >> pids'`,
      `setsid bash -c '(exec -a ${tok}-${tag}-d sleep 300) & echo $! >> pids' &`,
      `echo $$ >> pids; exec -a ${tok}-${tag}-top sleep 300`,
    ].join('\n');
  await m.launchRunning(APP, 0, app(['bash', '-c', tree('e0')]));
  await m.launchRunning(APP, 1, app(['bash', '-c', tree('e1', true)]));
  const driverApp = join(w.workDir, '..', `${tok}-driver.sh`);
  writeFileSync(driverApp, tree('drv'));
  t.after(() => rmSync(driverApp, { force: true }));
  const driverId = 'driver-20261130120000-0001';
  m.worker().send(
    LaunchDriver({
      driverId,
      driverDesc: {
        appPath: driverApp,
        mem: 64,
        cores: 1,
        supervise: true,
        command: { argv: ['bash', '{{USER_APP}}'], env: {} },
      },
    }),
  );
  const pids = [
    ...(await readPids(join(w.workDir, APP, '0', 'pids'), 4, t.signal)),
    ...(await readPids(join(w.workDir, APP, '1', 'pids'), 4, t.signal)),
    ...(await readPids(join(w.workDir, driverId, 'pids'), 4, t.signal)),
  ];
  assert.equal(pgrep(tok).length, 12);

  w.signal('SIGTERM');
  assert.equal(await w.exited, 0);
  assert.match(w.stderr, /Received SIGTERM, shutting down/);
  assert.deepEqual(pgrep(tok), []);
  for (const pid of pids) assert.equal(isAlive(pid), false, `pid ${pid} survived`);
});

test('--exit-with-parent: when stdin closes, the worker stops and its executors die with it', async (t) => {
  const m = await MockMaster.start(t);
  const w = await startWorker(t, m.url);
  await m.rec.next('WorkerLatestState');
  const tok = token(t);
  await m.launchRunning(
    APP,
    0,
    app([
      'bash',
      '-c',
      `setsid bash -c 'echo $$ >> pids; exec -a ${tok} sleep 300' & echo $$ >> pids; exec -a ${tok} sleep 300`,
    ]),
  );
  const pids = await readPids(join(w.workDir, APP, '0', 'pids'), 2, t.signal);
  w.child.stdin?.end();
  assert.equal(await w.exited, 0);
  assert.deepEqual(pgrep(tok), []);
  for (const pid of pids) assert.equal(isAlive(pid), false);
});

test('KillExecutor in the daemon kills the tree and reports KILLED', async (t) => {
  const m = await MockMaster.start(t);
  const w = await startWorker(t, m.url, { conf: { 'wick.worker.killTimeout': '500ms' } });
  await m.rec.next('WorkerLatestState');
  const tok = token(t);
  await m.launchRunning(
    APP,
    0,
    app([
      'bash',
      '-c',
      `setsid bash -c '(exec -a ${tok} sleep 300) & echo $! >> pids' & echo $$ >> pids; exec -a ${tok} sleep 300`,
    ]),
  );
  const pids = await readPids(join(w.workDir, APP, '0', 'pids'), 2, t.signal);
  m.worker().send(KillExecutor({ masterUrl: m.url, appId: APP, execId: 0 }));
  await m.executorState(APP, 0, 'KILLED');
  assert.deepEqual(pgrep(tok), []);
  for (const pid of pids) assert.equal(isAlive(pid), false);
});

test('a work dir that cannot be written stops start-up, naming the path', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'wick-workdir-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  // A regular file where a directory is needed: refused even for root, unlike chmod.
  writeFileSync(join(root, 'file'), '');
  const bad = join(root, 'file', 'work');
  const r = await wick([
    'worker',
    'wick://127.0.0.1:1',
    '--host',
    '127.0.0.1',
    '--port',
    '0',
    '--work-dir',
    bad,
  ]);
  assert.equal(r.code, 1);
  assert.ok(r.stderr.includes(`Work dir ${bad} is not writable`), r.stderr);
  assert.match(r.stderr, /choose another with --work-dir/);
  assert.doesNotMatch(r.stderr, /Connecting to master/);
});
