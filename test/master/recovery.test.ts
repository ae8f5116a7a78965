/**
 * FILESYSTEM recovery: a master SIGKILLed and restarted on the same port and recovery directory
 * is RECOVERING, takes back the workers and applications that answer MasterChanged, drops those
 * that do not after the timeout, and skips corrupt files, naming them.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { MasterChangeAcknowledged } from '../../backend/protocol/app.js';
import {
  RequestDriverStatus,
  RequestKillApplication,
  RequestKillDriver,
  RequestSubmitDriver,
} from '../../backend/protocol/client.js';
import { Daemon, startMaster, startWorker } from '../helpers/cluster.js';
import { checkNothingLeftRunning } from '../helpers/leaks.js';
import {
  appDescription,
  appIn,
  connectClient,
  MockApp,
  MockWorker,
  workerIn,
} from '../helpers/masterMocks.js';
import { within } from '../helpers/within.js';

checkNothingLeftRunning();

function recoveryDir(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'wick-test-recovery-'));
  // After hooks run in the order they were added: stop the masters before their directory goes.
  t.after(async () => {
    await Promise.all(Daemon.running().map((d) => d.stop()));
    rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}

function recoveryConf(dir: string, timeout: string) {
  return {
    'wick.deploy.recoveryMode': 'FILESYSTEM',
    'wick.deploy.recoveryDirectory': dir,
    'wick.worker.timeout': timeout,
  };
}

test('a real worker and an application survive a master SIGKILL: RECOVERING, then ALIVE with both back', {
  timeout: 30_000,
}, async (t) => {
  const dir = recoveryDir(t);
  // A long timeout: the master can only become ALIVE again because both answered.
  const conf = recoveryConf(dir, '60s');
  const first = await startMaster(t, { conf });
  const client1 = await connectClient(t, first.url);
  const worker = await startWorker(t, first.url, { cores: 2, memory: '1g' });
  const app = await MockApp.start(t, first.url);
  const appId = await app.register(
    appDescription({
      name: 'survivor',
      maxCores: 1,
      memoryPerExecutorMB: 64,
      command: { argv: [process.execPath, '-e', 'setInterval(() => {}, 1000)'], env: {} },
    }),
  );
  await client1.waitFor((s) => appIn(s, appId)?.executors[0]?.state === 'RUNNING');
  assert.deepEqual(readdirSync(dir).sort(), [`app_${appId}`, `worker_${worker.workerId}`]);

  await first.kill('SIGKILL');
  const second = await startMaster(t, { port: first.port, conf });
  assert.equal(second.url, first.url);
  await second.waitForStderr(/I have been elected leader! New state: RECOVERING/);
  const client = await connectClient(t, second.url);
  const s = await client.waitFor(
    (s) =>
      s.status === 'ALIVE' &&
      workerIn(s, worker.workerId)?.state === 'ALIVE' &&
      appIn(s, appId)?.state === 'RUNNING',
  );
  await second.waitForStderr(/Recovery complete - resuming operations!/);
  assert.match(second.stderr, new RegExp(`Worker has been re-registered: ${worker.workerId}`));
  assert.match(second.stderr, new RegExp(`Application has been re-registered: ${appId}`));
  assert.equal(app.endpoint.all('MasterChanged').length, 1);
  // The executor the worker still runs is the app's again, on that worker, with its cores.
  const a = appIn(s, appId);
  assert.deepEqual(
    a?.executors.map((e) => [e.id, e.workerId, e.state]),
    [[0, worker.workerId, 'RUNNING']],
  );
  assert.equal(a?.coresGranted, 1);
  assert.equal(workerIn(s, worker.workerId)?.coresUsed, 1);
  assert.deepEqual(s.completedApps, []);
  // And nothing was launched twice: the worker still runs just that one.
  assert.doesNotMatch(worker.stderr, /Asked to launch executor .*\/1 /);
  // The worker shuts down cleanly, its executor's end reported to nobody rather than crashing.
  assert.equal(await worker.stop(), 0, worker.stderr);
});

test('after a restart, a worker and an application that do not answer are dropped after the timeout', {
  timeout: 60_000,
}, async (t) => {
  const dir = recoveryDir(t);
  // Short, but several heartbeats long even on a loaded machine.
  const conf = recoveryConf(dir, '2s');
  const first = await startMaster(t, { conf });
  const answering = await MockWorker.start(t, first.url, { heartbeatMs: 200 });
  const silent = await MockWorker.start(t, first.url, {
    heartbeatMs: 200,
    answerMasterChanged: false,
    reconnect: false,
  });
  for (const w of [answering, silent]) {
    assert.equal((await w.registerAndWait()).type, 'RegisteredWorker');
  }
  const goodApp = await MockApp.start(t, first.url);
  const goodId = await goodApp.register(appDescription({ memoryPerExecutorMB: 100_000 }));
  const mute = await MockApp.start(t, first.url);
  mute.answerMasterChanged = false;
  const muteId = await mute.register(appDescription({ memoryPerExecutorMB: 100_000 }));
  assert.equal(readdirSync(dir).length, 4);

  await first.kill('SIGKILL');
  silent.stopHeartbeats();
  const second = await startMaster(t, { port: first.port, conf });
  // Should a step never come: which one, and what the new master said.
  const said = (step: string) => () =>
    `${step}; the restarted master's stderr:\n${second.stderr.slice(-4000)}`;
  await within(20_000, second.waitForStderr(/New state: RECOVERING/), said('RECOVERING'));
  await within(20_000, silent.endpoint.next('MasterChanged'), said('MasterChanged (worker)'));
  await within(20_000, mute.endpoint.next('MasterChanged'), said('MasterChanged (app)'));
  const client = await connectClient(t, second.url);
  const s = await within(
    20_000,
    client.waitFor((s) => s.status === 'ALIVE'),
    said('the master ALIVE'),
  );
  assert.equal(workerIn(s, answering.id)?.state, 'ALIVE');
  assert.equal(workerIn(s, silent.id)?.state, 'DEAD');
  assert.equal(appIn(s, goodId)?.state, 'WAITING');
  assert.equal(appIn(s, muteId)?.state, 'FINISHED');
  assert.deepEqual(
    s.activeApps.map((a) => a.id),
    [goodId],
  );
  // Whichever comes first removes it, as in Spark: the end of recovery (the worker never answered
  // MasterChanged) or the check for dead workers (it sends no heartbeats); both wait 2 s here.
  await within(
    20_000,
    second.waitForStderr(
      new RegExp(
        `Removing worker ${silent.id} .*(?:Not responding for recovery|Not receiving heartbeat)`,
      ),
    ),
    said('the silent worker removed'),
  );
  // What was dropped is no longer persisted: a third master would not wait for it.
  assert.deepEqual(readdirSync(dir).sort(), [`app_${goodId}`, `worker_${answering.id}`]);
});

test('corrupt files in the recovery directory are named in the log and skipped; the rest recovers', {
  timeout: 60_000,
}, async (t) => {
  const dir = recoveryDir(t);
  const conf = recoveryConf(dir, '60s');
  const first = await startMaster(t, { conf });
  const app = await MockApp.start(t, first.url);
  const appId = await app.register(appDescription({ memoryPerExecutorMB: 64 }));
  await first.kill('SIGKILL');

  writeFileSync(join(dir, 'app_app-20000101000000-0009'), '{"id": "app-20000101000000-0009", ');
  writeFileSync(join(dir, 'worker_worker-bad'), JSON.stringify({ id: 'worker-bad', port: 'x' }));
  writeFileSync(join(dir, 'driver_driver-empty'), '');
  writeFileSync(join(dir, 'notes.txt'), 'not a record, not a worry');

  const second = await startMaster(t, { port: first.port, conf });
  for (const name of ['app_app-20000101000000-0009', 'worker_worker-bad', 'driver_driver-empty']) {
    await second.waitForStderr(
      new RegExp(`WARN .*Skipping corrupt recovery file ${join(dir, name).replace(/[.]/g, '\\.')}`),
    );
  }
  assert.doesNotMatch(second.stderr, /notes\.txt/);
  const client = await connectClient(t, second.url);
  const s = await client.waitFor(
    (s) => s.status === 'ALIVE' && appIn(s, appId)?.state === 'WAITING',
  );
  assert.deepEqual(
    s.activeApps.map((a) => a.id),
    [appId],
  );
  assert.deepEqual(s.workers, []);
  assert.deepEqual(s.activeDrivers, []);
  // It keeps serving: a worker registers, and the recovered app gets an executor on it.
  const w = await MockWorker.start(t, second.url);
  assert.equal((await w.registerAndWait()).type, 'RegisteredWorker');
  assert.equal((await app.endpoint.next('ExecutorAdded')).workerId, w.id);
  // A new application's number follows the recovered one's.
  const next = await MockApp.start(t, second.url);
  const nextId = await next.register();
  assert.ok(nextId.endsWith('-0001') || nextId.slice(4, 18) !== appId.slice(4, 18), nextId);
  assert.ok(second.isRunning);
});

test('while RECOVERING, client requests are refused naming the state, and an UNKNOWN worker is replaced', {
  timeout: 60_000,
}, async (t) => {
  const dir = recoveryDir(t);
  const conf = recoveryConf(dir, '60s');
  const first = await startMaster(t, { conf });
  const w = await MockWorker.start(t, first.url, { answerMasterChanged: false });
  assert.equal((await w.registerAndWait()).type, 'RegisteredWorker');
  const app = await MockApp.start(t, first.url);
  app.answerMasterChanged = false;
  const appId = await app.register(appDescription({ memoryPerExecutorMB: 100_000 }));
  await first.kill('SIGKILL');
  const second = await startMaster(t, { port: first.port, conf });
  await w.endpoint.next('MasterChanged');
  await app.endpoint.next('MasterChanged');
  const client = await connectClient(t, second.url);
  assert.equal((await client.state()).status, 'RECOVERING');

  const notAlive = /Current state is not alive: RECOVERING/;
  const driverDescription = {
    appPath: '/tmp/a.js',
    mem: 64,
    cores: 1,
    supervise: false,
    command: { argv: ['node'], env: {} },
  };
  const sub = await client.master.ask(RequestSubmitDriver({ driverDescription }));
  assert.equal(sub.success, false);
  assert.match(sub.message, notAlive);
  const driverId = 'driver-20000101000000-0000';
  const kill = await client.master.ask(RequestKillDriver({ driverId }));
  assert.equal(kill.success, false);
  assert.match(kill.message, notAlive);
  const st = await client.master.ask(RequestDriverStatus({ driverId }));
  assert.equal(st.found, false);
  assert.match(st.exception ?? '', notAlive);
  const killApp = await client.master.ask(RequestKillApplication({ appId }));
  assert.equal(killApp.success, false);
  assert.match(killApp.message, notAlive);

  // The worker, still UNKNOWN, registers again from the same address under a new id: replaced.
  const newId = `${w.id}-restarted`;
  assert.equal((await w.registerAndWait(newId)).type, 'RegisteredWorker');
  let s = await client.waitFor((s) => workerIn(s, newId)?.state === 'ALIVE');
  assert.equal(workerIn(s, w.id)?.state, 'DEAD');
  assert.equal(s.status, 'RECOVERING', 'the application has not answered yet');

  // The application answers at last: recovery completes, and requests are taken again.
  app.master.send(MasterChangeAcknowledged({ appId }));
  s = await client.waitFor((s) => s.status === 'ALIVE');
  assert.equal(appIn(s, appId)?.state, 'WAITING');
  const again = await client.master.ask(RequestSubmitDriver({ driverDescription }));
  assert.equal(again.success, true);
  assert.deepEqual(readdirSync(dir).sort(), [
    `app_${appId}`,
    `driver_${again.driverId}`,
    `worker_${newId}`,
  ]);
});

test('a master that died between a relaunch’s two records recovers the relaunch only, and drops the old record', {
  timeout: 60_000,
}, async (t) => {
  const dir = recoveryDir(t);
  const conf = recoveryConf(dir, '60s');
  const desc = {
    appPath: '/tmp/a.js',
    mem: 64,
    cores: 1,
    supervise: true,
    command: { argv: ['node'], env: {} },
  };
  const old = 'driver-20000101000000-0003';
  const fresh = 'driver-20000101000100-0004';
  writeFileSync(join(dir, `driver_${old}`), JSON.stringify({ id: old, desc, submitDate: 1 }));
  writeFileSync(
    join(dir, `driver_${fresh}`),
    JSON.stringify({ id: fresh, desc, submitDate: 2, relaunchedFrom: old }),
  );
  const master = await startMaster(t, { conf });
  await master.waitForStderr(
    new RegExp(`Dropping the record of driver ${old}: it was relaunched under a new id`),
  );
  const client = await connectClient(t, master.url);
  // Nothing else to wait for, recovery completes at once: the relaunch, which no worker claims
  // and is supervised, is relaunched in turn, under a newer id than any recovered.
  const s = await client.waitFor((s) => s.status === 'ALIVE' && s.activeDrivers.length === 1);
  const [now] = s.activeDrivers;
  assert.equal(now?.relaunchedFrom, fresh);
  assert.ok((now?.id ?? '') > fresh, `${now?.id} comes after ${fresh}`);
  assert.deepEqual(
    s.completedDrivers.map((d) => [d.id, d.state]),
    [[fresh, 'RELAUNCHING']],
  );
  assert.deepEqual(readdirSync(dir).sort(), [`driver_${now?.id}`], 'one record, the latest run');
});
