/**
 * The Worker ↔ Master side of a real Worker endpoint, against mock masters on loopback: registration
 * with every master, retries at the configured intervals (a ManualClock moves time), giving up,
 * RegisterWorkerFailed, MasterInStandby, heartbeats every timeout/4, MasterChanged, ReconnectWorker,
 * and a lost master connection.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import {
  MasterChanged,
  ReconnectWorker,
  RegisterWorkerFailed,
  WorkerLatestState,
} from '../../../backend/protocol/deploy.js';
import { RequestWorkerState } from '../../../backend/protocol/worker.js';
import { checkNothingLeftRunning } from '../../helpers/leaks.js';
import { waitFor } from '../../helpers/processes.js';
import {
  logLines,
  MockMaster,
  nodeApp,
  registeredWorker,
  startTestWorker,
  waitForLog,
} from '../../helpers/workerHarness.js';

checkNothingLeftRunning();

/** Resolves once the worker has handled everything `master` sent it before (same connection). */
function viaMaster(master: MockMaster) {
  return master.worker().ask(RequestWorkerState({}));
}

test('registers with every master at once; once accepted: WorkerLatestState, then heartbeats every timeout/4', async (t) => {
  const [m1, m2] = await Promise.all([MockMaster.start(t), MockMaster.start(t)]);
  m2.mode = 'ignore';
  const w = await startTestWorker(t, {
    masters: [m1.url, m2.url],
    conf: { 'wick.worker.timeout': '60s' },
    cores: 3,
    memoryMB: 1536,
  });
  const [r1, r2] = await Promise.all([
    m1.rec.next('RegisterWorker'),
    m2.rec.next('RegisterWorker'),
  ]);
  const port = w.env.rpcAddress?.port;
  for (const [r, m] of [
    [r1, m1],
    [r2, m2],
  ] as const) {
    assert.equal(r.id, w.worker.workerId);
    assert.match(r.id as string, new RegExp(`^worker-\\d{14}-127\\.0\\.0\\.1-${port}$`));
    assert.equal(r.host, '127.0.0.1');
    assert.equal(r.port, port);
    assert.equal(r.cores, 3);
    assert.equal(r.memory, 1536);
    assert.equal(r.masterAddress, m.address);
    assert.deepEqual(r.worker, { address: w.env.address, name: 'Worker' });
  }
  const latest = await m1.rec.next('WorkerLatestState');
  assert.deepEqual(latest, {
    type: 'WorkerLatestState',
    id: w.worker.workerId,
    executors: [],
    driverIds: [],
  });
  await m1.rec.count('Heartbeat', 1);
  assert.equal(w.worker.masterConnection.registered, true);
  assert.equal(w.worker.masterConnection.activeMasterUrl, m1.url);
  assert.equal(w.worker.masterConnection.heartbeatMs, 15_000);
  // Registered: the retry timer is gone; only the heartbeat's is left.
  assert.equal(w.clock.pendingTimers(), 1);

  // Not a millisecond early: a probe sent after the clock moved 14 999 ms overtakes no heartbeat.
  w.clock.advance(14_999);
  await w.barrier();
  const probe = m1.rec.mark;
  w.worker.masterConnection.send(
    WorkerLatestState({ id: w.worker.workerId, executors: [], driverIds: [] }),
  );
  await m1.rec.next('WorkerLatestState', undefined, probe);
  assert.equal(m1.rec.all('Heartbeat').length, 1);
  w.clock.advance(1);
  await m1.rec.count('Heartbeat', 2);
  w.clock.advance(3 * 15_000);
  const beats = await m1.rec.count('Heartbeat', 5);
  for (const b of beats) {
    assert.deepEqual(b, {
      type: 'Heartbeat',
      workerId: w.worker.workerId,
      worker: { address: w.env.address, name: 'Worker' },
    });
  }
  assert.equal(m2.rec.all('Heartbeat').length, 0);
});

test('retries at the initial interval, then the prolonged one, then gives up', async (t) => {
  const m = await MockMaster.start(t);
  m.mode = 'ignore';
  const w = await startTestWorker(t, {
    masters: [m.url],
    conf: {
      'wick.worker.initialRegistrationRetries': '2',
      'wick.worker.maxRegistrationRetries': '4',
      'wick.worker.initialRegistrationInterval': '10s',
      'wick.worker.prolongedRegistrationInterval': '60s',
    },
  });
  await m.rec.count('RegisterWorker', 1);
  // With random() = 0.5 each wait is exactly its interval: 10 s, 10 s, then 60 s, 60 s.
  let attempts = 1;
  for (const interval of [10_000, 10_000, 60_000, 60_000]) {
    const before = w.worker.masterConnection.connectionAttemptCount;
    w.clock.advance(interval - 1);
    await w.barrier();
    assert.equal(
      w.worker.masterConnection.connectionAttemptCount,
      before,
      `retried before ${interval} ms`,
    );
    w.clock.advance(1);
    attempts++;
    await m.rec.count('RegisterWorker', attempts);
  }
  assert.deepEqual(w.exits, []);
  w.clock.advance(60_000);
  await w.barrier();
  assert.deepEqual(w.exits, [{ code: 1, reason: 'All masters are unresponsive! Giving up.' }]);
  assert.equal(m.rec.all('RegisterWorker').length, 5);
});

test('a master that does not answer is asked again, and registration succeeds once it does', async (t) => {
  const m = await MockMaster.start(t);
  m.mode = 'ignore';
  const w = await startTestWorker(t, {
    masters: [m.url],
    conf: { 'wick.worker.initialRegistrationInterval': '200ms' },
  });
  await m.rec.count('RegisterWorker', 1);
  m.mode = 'accept';
  w.clock.advance(200);
  await m.rec.next('WorkerLatestState');
  assert.equal(w.worker.masterConnection.registered, true);
  assert.equal(m.rec.all('RegisterWorker').length, 2);
});

test('RegisterWorkerFailed before registration ends the worker with the reason', async (t) => {
  const m = await MockMaster.start(t);
  m.mode = 'fail';
  m.failMessage = 'Duplicate worker ID';
  const w = await startTestWorker(t, { masters: [m.url] });
  await waitFor('exit', () => w.exits.length > 0, t.signal);
  assert.deepEqual(w.exits, [
    { code: 1, reason: 'Worker registration failed: Duplicate worker ID' },
  ]);
});

test('RegisterWorkerFailed after registration is ignored', async (t) => {
  const m = await MockMaster.start(t);
  const w = await registeredWorker(t, m);
  m.worker().send(RegisterWorkerFailed({ message: 'late' }));
  await viaMaster(m);
  assert.deepEqual(w.exits, []);
  assert.equal(w.worker.masterConnection.registered, true);
});

test('MasterInStandby is ignored: the worker keeps retrying until a master accepts', async (t) => {
  const m = await MockMaster.start(t);
  m.mode = 'standby';
  const w = await startTestWorker(t, {
    masters: [m.url],
    conf: { 'wick.worker.initialRegistrationInterval': '1s' },
  });
  await m.rec.count('RegisterWorker', 1);
  await viaMaster(m);
  assert.equal(w.worker.masterConnection.registered, false);
  assert.deepEqual(w.exits, []);
  assert.equal(w.clock.pendingTimers(), 1, 'the retry is still scheduled');
  m.mode = 'accept';
  w.clock.advance(1000);
  await m.rec.next('WorkerLatestState');
  assert.equal(w.worker.masterConnection.registered, true);
});

test('MasterChanged: the worker follows the new master and answers WorkerSchedulerStateResponse', async (t) => {
  // HA as it runs: both masters configured, both holding the cluster secret; m2 is the standby
  // until it takes over.
  const secret = randomBytes(32).toString('hex');
  const [m1, m2] = await Promise.all([
    MockMaster.start(t, 0, secret),
    MockMaster.start(t, 0, secret),
  ]);
  m2.mode = 'standby';
  const from = m1.rec.mark;
  const w = await startTestWorker(t, {
    masters: [m1.url, m2.url],
    secret,
    conf: { 'wick.worker.timeout': '4s' },
  });
  await m1.rec.next('WorkerLatestState', undefined, from);
  await m1.launchRunning('app-20261130120000-0001', 0, nodeApp('setInterval(() => {}, 1000)'));

  const workerInM2 = m2.env.endpointRef(m1.worker().toData());
  workerInM2.send(MasterChanged({ master: m2.ref.toData(), masterWebUiUrl: m2.webUiUrl }));
  const resp = await m2.rec.next('WorkerSchedulerStateResponse');
  assert.deepEqual(resp, {
    type: 'WorkerSchedulerStateResponse',
    id: w.worker.workerId,
    executors: [{ appId: 'app-20261130120000-0001', execId: 0, cores: 1, state: 'RUNNING' }],
    driverIds: [],
  });
  assert.equal(w.worker.masterConnection.activeMasterUrl, m2.url);
  assert.equal(w.worker.masterConnection.activeMasterWebUiUrl, m2.webUiUrl);

  // Heartbeats now go to the new master, and only it may launch executors.
  const beats1 = m1.rec.all('Heartbeat').length;
  w.clock.advance(1000);
  await m2.rec.count('Heartbeat', 1);
  const from1 = m1.rec.mark;
  m1.launchExecutor('app-20261130120000-0001', 1, nodeApp('0'));
  await viaMaster(m1);
  assert.equal(m1.rec.all('ExecutorStateChanged', from1).length, 0);
  assert.equal(m1.rec.all('Heartbeat').length, beats1);
  const state = await w.state();
  assert.deepEqual(
    state.executors.map((e) => e.execId),
    [0],
  );
  assert.equal(state.masterUrl, m2.url);
});

test('ReconnectWorker: the worker registers again', async (t) => {
  const m = await MockMaster.start(t);
  const w = await registeredWorker(t, m);
  const from = m.rec.mark;
  m.worker().send(ReconnectWorker({ masterUrl: m.url }));
  const again = await m.rec.next('RegisterWorker', undefined, from);
  assert.equal(again.id, w.worker.workerId);
  await m.rec.next('WorkerLatestState', undefined, from);
  assert.equal(w.worker.masterConnection.registered, true);
});

test('a lost master connection: the worker registers again with the same master address', async (t) => {
  const m1 = await MockMaster.start(t);
  const w = await registeredWorker(t, m1, {
    conf: { 'wick.worker.initialRegistrationInterval': '2s' },
  });
  const port = m1.port;
  const from = logLines.length;
  await m1.env.stop();
  await waitFor('the worker to notice', () => !w.worker.masterConnection.connected, t.signal);
  assert.equal(w.worker.masterConnection.registered, false);
  // It tries every master at once, and fails: nothing listens there now.
  const addr = m1.address.replaceAll('.', '\\.');
  await waitForLog(new RegExp(`Failed to connect to master ${addr}`), from, t.signal);

  // The master comes back on the same address; the next retry finds it.
  const m2 = await MockMaster.start(t, port);
  w.clock.advance(2000);
  const reg = await m2.rec.next('RegisterWorker');
  assert.equal(reg.id, w.worker.workerId);
  await m2.rec.next('WorkerLatestState');
  assert.equal(w.worker.masterConnection.registered, true);
  assert.equal(w.worker.masterConnection.activeMasterUrl, m2.url);
});
