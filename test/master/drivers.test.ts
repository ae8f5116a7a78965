/**
 * Drivers in cluster deploy mode against a real master: submission, placement on a mock worker,
 * status, kill (waiting and running), state from the worker, and what happens to a driver whose
 * worker dies (supervised → relaunched elsewhere, else ERROR).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  RequestDriverStatus,
  RequestKillDriver,
  RequestSubmitDriver,
} from '../../backend/protocol/client.js';
import type { DriverDescription } from '../../backend/protocol/common.js';
import { startMaster } from '../helpers/cluster.js';
import { checkNothingLeftRunning } from '../helpers/leaks.js';
import {
  connectClient,
  driverIn,
  type MasterClient,
  MockWorker,
  workerIn,
} from '../helpers/masterMocks.js';

checkNothingLeftRunning();

const DRIVER_ID = /^driver-\d{14}-(\d{4})$/;

function driverDesc(fields: Partial<DriverDescription> = {}): DriverDescription {
  return {
    appPath: '/tmp/app.js',
    mem: 512,
    cores: 1,
    supervise: false,
    command: { argv: ['node', '{{USER_APP}}'], env: {} },
    ...fields,
  };
}

async function submit(client: MasterClient, desc = driverDesc()) {
  return client.master.ask(RequestSubmitDriver({ driverDescription: desc }));
}

function status(client: MasterClient, driverId: string) {
  return client.master.ask(RequestDriverStatus({ driverId }));
}

function kill(client: MasterClient, driverId: string) {
  return client.master.ask(RequestKillDriver({ driverId }));
}

test('RequestSubmitDriver → SubmitDriverResponse with driver-yyyyMMddHHmmss-NNNN; LaunchDriver to a worker; FINISHED frees it', {
  timeout: 60_000,
}, async (t) => {
  const master = await startMaster(t);
  const client = await connectClient(t, master.url);
  const w = await MockWorker.start(t, master.url, { cores: 2, memory: 1024 });
  assert.equal((await w.registerAndWait()).type, 'RegisteredWorker');
  const desc = driverDesc();
  const r = await submit(client, desc);
  assert.equal(r.success, true);
  assert.equal(DRIVER_ID.exec(r.driverId ?? '')?.[1], '0000');
  assert.deepEqual(r.master, { address: master.address, name: 'Master' });
  assert.match(r.message, new RegExp(`Driver successfully submitted as ${r.driverId}`));
  const driverId = r.driverId as string;

  const launch = await w.endpoint.next('LaunchDriver');
  assert.equal(launch.driverId, driverId);
  assert.deepEqual(launch.driverDesc, desc);
  const st = await status(client, driverId);
  assert.deepEqual(
    [st.found, st.state, st.workerId, st.workerHostPort],
    [true, 'RUNNING', w.id, `127.0.0.1:${w.port}`],
  );
  let s = await client.waitFor((s) => workerIn(s, w.id)?.coresUsed === 1);
  assert.equal(workerIn(s, w.id)?.memoryUsed, 512);
  assert.deepEqual(workerIn(s, w.id)?.driverIds, [driverId]);

  w.driverStateChanged(driverId, 'FINISHED');
  s = await client.waitFor((s) => driverIn(s, driverId)?.state === 'FINISHED');
  assert.deepEqual(
    s.completedDrivers.map((d) => d.id),
    [driverId],
  );
  assert.deepEqual(s.activeDrivers, []);
  assert.equal(workerIn(s, w.id)?.coresUsed, 0);
  assert.equal((await status(client, driverId)).state, 'FINISHED', 'completed drivers are found');
  const second = await submit(client);
  assert.equal(DRIVER_ID.exec(second.driverId ?? '')?.[1], '0001');
});

test('a driver no worker can take waits SUBMITTED; killing it → KILLED without any worker involved', {
  timeout: 60_000,
}, async (t) => {
  const master = await startMaster(t);
  const client = await connectClient(t, master.url);
  const w = await MockWorker.start(t, master.url, { cores: 1, memory: 256 });
  assert.equal((await w.registerAndWait()).type, 'RegisteredWorker');
  const r = await submit(client, driverDesc({ mem: 512 }));
  const driverId = r.driverId as string;
  const st = await status(client, driverId);
  assert.deepEqual([st.found, st.state, st.workerId], [true, 'SUBMITTED', undefined]);
  const k = await kill(client, driverId);
  assert.equal(k.success, true);
  assert.equal(k.driverId, driverId);
  assert.equal((await status(client, driverId)).state, 'KILLED');
  await client.waitFor((s) => driverIn(s, driverId)?.state === 'KILLED');
  await w.barrier();
  assert.equal(w.endpoint.all('LaunchDriver').length + w.endpoint.all('KillDriver').length, 0);
});

test('killing a running driver sends KillDriver to its worker; the worker reports KILLED', {
  timeout: 60_000,
}, async (t) => {
  const master = await startMaster(t);
  const client = await connectClient(t, master.url);
  const w = await MockWorker.start(t, master.url);
  assert.equal((await w.registerAndWait()).type, 'RegisteredWorker');
  const driverId = (await submit(client)).driverId as string;
  await w.endpoint.next('LaunchDriver');
  w.driverStateChanged(driverId, 'RUNNING');
  const k = await kill(client, driverId);
  assert.equal(k.success, true);
  assert.match(k.message, /Kill request for .* submitted/);
  assert.equal((await w.endpoint.next('KillDriver')).driverId, driverId);
  assert.equal((await status(client, driverId)).state, 'RUNNING', 'until the worker says so');
  w.driverStateChanged(driverId, 'KILLED');
  const s = await client.waitFor((s) => driverIn(s, driverId)?.state === 'KILLED');
  assert.equal(workerIn(s, w.id)?.coresUsed, 0);
});

test('an unknown driver: status not found, kill refused', { timeout: 60_000 }, async (t) => {
  const master = await startMaster(t);
  const client = await connectClient(t, master.url);
  const st = await status(client, 'driver-20000101000000-0042');
  assert.equal(st.found, false);
  const k = await kill(client, 'driver-20000101000000-0042');
  assert.equal(k.success, false);
  assert.match(k.message, /already finished or does not exist/);
});

test('a driver that fails reports FAILED with its exception', { timeout: 60_000 }, async (t) => {
  const master = await startMaster(t);
  const client = await connectClient(t, master.url);
  const w = await MockWorker.start(t, master.url);
  assert.equal((await w.registerAndWait()).type, 'RegisteredWorker');
  const driverId = (await submit(client)).driverId as string;
  await w.endpoint.next('LaunchDriver');
  w.driverStateChanged(driverId, 'FAILED', 'exit code 3');
  const s = await client.waitFor((s) => driverIn(s, driverId)?.state === 'FAILED');
  assert.equal(driverIn(s, driverId)?.exception, 'exit code 3');
  assert.equal((await status(client, driverId)).exception, 'exit code 3');
});

test('a supervised driver is relaunched on another worker when its worker dies; an unsupervised one → ERROR', {
  timeout: 60_000,
}, async (t) => {
  const master = await startMaster(t);
  const client = await connectClient(t, master.url);
  const a = await MockWorker.start(t, master.url, { cores: 1, memory: 1024 });
  const b = await MockWorker.start(t, master.url, { cores: 1, memory: 1024 });
  for (const w of [a, b]) assert.equal((await w.registerAndWait()).type, 'RegisteredWorker');
  const supervised = (await submit(client, driverDesc({ supervise: true }))).driverId as string;
  const plain = (await submit(client, driverDesc({ supervise: false }))).driverId as string;
  // One core each: one driver per worker, in an order the master picks at random.
  const onA = (await a.endpoint.next('LaunchDriver')).driverId as string;
  const onB = (await b.endpoint.next('LaunchDriver')).driverId as string;
  assert.deepEqual([onA, onB].sort(), [supervised, plain].sort());
  const [dies, survives] = onA === supervised ? [a, b] : [b, a];

  await dies.stop();
  let s = await client.waitFor((s) => workerIn(s, dies.id)?.state === 'DEAD');
  // The supervised driver runs again under a new id (SPARK-19900): the old one ends RELAUNCHING,
  // the new one names it and waits until the surviving worker has room again.
  s = await client.waitFor((s) => driverIn(s, supervised)?.state === 'RELAUNCHING');
  assert.ok(s.completedDrivers.some((d) => d.id === supervised));
  const again = s.activeDrivers.find((d) => d.relaunchedFrom === supervised);
  assert.ok(again, 'a new driver replaces it');
  assert.notEqual(again.id, supervised);
  assert.equal(again.workerId, undefined);
  assert.equal((await status(client, supervised)).state, 'RELAUNCHING');
  survives.driverStateChanged(plain, 'FINISHED');
  await survives.endpoint.next('LaunchDriver', (m) => m.driverId === again.id);
  s = await client.waitFor((s) => driverIn(s, again.id)?.workerId === survives.id);
  assert.equal(driverIn(s, again.id)?.state, 'RUNNING');
  await master.waitForStderr(new RegExp(`Re-launching driver ${supervised} as ${again.id}`));

  // Now the other way round: the unsupervised driver's worker dies.
  const c = await MockWorker.start(t, master.url, { cores: 1, memory: 1024 });
  assert.equal((await c.registerAndWait()).type, 'RegisteredWorker');
  const lone = (await submit(client, driverDesc())).driverId as string;
  await c.endpoint.next('LaunchDriver', (m) => m.driverId === lone);
  await c.stop();
  s = await client.waitFor((s) => driverIn(s, lone)?.state === 'ERROR');
  assert.ok(s.completedDrivers.some((d) => d.id === lone));
  assert.equal((await status(client, lone)).state, 'ERROR');
  await master.waitForStderr(new RegExp(`Not re-launching ${lone} because it was not supervised`));
});

test('SPARK-19900: the old run’s late KILLED, once its worker is back and reconciled, ends nothing; a kill by the submitted id reaches the relaunch', {
  timeout: 60_000,
}, async (t) => {
  const master = await startMaster(t, { conf: { 'wick.worker.timeout': '1s' } });
  const client = await connectClient(t, master.url);
  const a = await MockWorker.start(t, master.url, { cores: 1, memory: 1024, heartbeatMs: 200 });
  assert.equal((await a.registerAndWait()).type, 'RegisteredWorker');
  const submitted = (await submit(client, driverDesc({ supervise: true }))).driverId as string;
  await a.endpoint.next('LaunchDriver', (m) => m.driverId === submitted);
  const b = await MockWorker.start(t, master.url, { cores: 1, memory: 1024, heartbeatMs: 200 });
  assert.equal((await b.registerAndWait()).type, 'RegisteredWorker');

  // Worker a falls silent (a partition: its connection stays open), and is written off.
  a.stopHeartbeats();
  await client.waitFor((s) => workerIn(s, a.id)?.state === 'DEAD');
  const relaunch = await b.endpoint.next('LaunchDriver');
  assert.notEqual(relaunch.driverId, submitted);
  const newId = relaunch.driverId as string;
  await client.waitFor((s) => driverIn(s, newId)?.state === 'RUNNING');

  // It comes back, still running the old run: the master, which knows no such driver any more,
  // has it killed, and the worker's KILLED for it ends nothing.
  const mark = a.endpoint.mark;
  a.startHeartbeats(200);
  await a.endpoint.next('RegisteredWorker', undefined, mark);
  a.sendLatestState();
  const killOld = await a.endpoint.next('KillDriver', undefined, mark);
  assert.equal(killOld.driverId, submitted);
  a.driverStateChanged(submitted, 'KILLED');
  await a.barrier();
  await master.waitForStderr(new RegExp(`Asked to remove unknown driver: ${submitted}`));
  let s = await client.state();
  assert.deepEqual(
    s.activeDrivers.map((d) => [d.id, d.state, d.workerId, d.relaunchedFrom]),
    [[newId, 'RUNNING', b.id, submitted]],
  );
  assert.equal(driverIn(s, submitted)?.state, 'RELAUNCHING');

  // The id the submit printed still kills the submission: its latest run.
  const k = await kill(client, submitted);
  assert.equal(k.success, true);
  assert.equal(k.message, `Kill request for ${newId} (the relaunch of ${submitted}) submitted`);
  assert.equal((await b.endpoint.next('KillDriver')).driverId, newId);
  b.driverStateChanged(newId, 'KILLED');
  s = await client.waitFor((s) => driverIn(s, newId)?.state === 'KILLED');
  assert.deepEqual(s.activeDrivers, []);
});
