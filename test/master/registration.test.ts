/**
 * Worker registration with a real master process (Spark's MasterSuite style): mock workers in this
 * process speak RegisterWorker / Heartbeat / WorkerLatestState by hand, and a real `wick worker`
 * where its own behaviour (its id, its registration) is what is tested.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startMaster, startWorker } from '../helpers/cluster.js';
import { checkNothingLeftRunning } from '../helpers/leaks.js';
import {
  appDescription,
  connectClient,
  MockApp,
  MockWorker,
  workerIn,
} from '../helpers/masterMocks.js';

checkNothingLeftRunning();

const WORKER_ID = /^worker-\d{14}-127\.0\.0\.1-(\d+)$/;

test('RegisterWorker → RegisteredWorker with the master URL and web UI URL; listed ALIVE', {
  timeout: 60_000,
}, async (t) => {
  const master = await startMaster(t);
  const client = await connectClient(t, master.url);
  const w = await MockWorker.start(t, master.url, { cores: 3, memory: 2048 });
  const reply = await w.registerAndWait();
  assert.equal(reply.type, 'RegisteredWorker');
  assert.deepEqual(reply.master, { address: master.address, name: 'Master' });
  assert.equal(reply.masterWebUiUrl, master.webUiUrl);
  assert.equal(reply.masterAddress, master.address);
  const s = await client.waitFor((s) => workerIn(s, w.id)?.state === 'ALIVE');
  const listed = workerIn(s, w.id);
  assert.equal(listed?.cores, 3);
  assert.equal(listed?.memory, 2048);
  assert.equal(listed?.host, '127.0.0.1');
  assert.equal(listed?.port, w.port);
  assert.equal(listed?.coresUsed, 0);
});

test('a real worker registers under an id worker-yyyyMMddHHmmss-host-port', {
  timeout: 60_000,
}, async (t) => {
  const master = await startMaster(t);
  const client = await connectClient(t, master.url);
  const worker = await startWorker(t, master.url, { cores: 2, memory: '512m' });
  const m = WORKER_ID.exec(worker.workerId);
  assert.ok(m, `worker id ${worker.workerId}`);
  assert.equal(`127.0.0.1:${m[1]}`, worker.address);
  const s = await client.waitFor((s) => workerIn(s, worker.workerId)?.state === 'ALIVE');
  const listed = workerIn(s, worker.workerId);
  assert.equal(listed?.cores, 2);
  assert.equal(listed?.memory, 512);
  // The timestamp is the registration's, in local time, give or take the test's duration.
  const ts = worker.workerId.slice('worker-'.length, 'worker-'.length + 14);
  const [y, mo, d, h, mi, se] = [0, 4, 6, 8, 10, 12].map((i, k) =>
    Number(ts.slice(i, k === 0 ? 4 : i + 2)),
  ) as [number, number, number, number, number, number];
  const when = new Date(y, mo - 1, d, h, mi, se).getTime();
  assert.ok(Math.abs(Date.now() - when) < 10 * 60_000, `timestamp ${ts} is not now`);
});

test('a second worker with an id already registered gets RegisterWorkerFailed("Duplicate worker ID")', {
  timeout: 60_000,
}, async (t) => {
  const master = await startMaster(t);
  const client = await connectClient(t, master.url);
  const a = await MockWorker.start(t, master.url);
  assert.equal((await a.registerAndWait()).type, 'RegisteredWorker');
  const b = await MockWorker.start(t, master.url, { id: a.id });
  const reply = await b.registerAndWait();
  assert.equal(reply.type, 'RegisterWorkerFailed');
  assert.equal(reply.message, 'Duplicate worker ID');
  const s = await client.state();
  assert.deepEqual(
    s.workers.map((w) => [w.id, w.port]),
    [[a.id, a.port]],
  );
});

test('a registration from the address of a worker still alive gets RegisterWorkerFailed', {
  timeout: 60_000,
}, async (t) => {
  const master = await startMaster(t);
  const client = await connectClient(t, master.url);
  const w = await MockWorker.start(t, master.url);
  assert.equal((await w.registerAndWait()).type, 'RegisteredWorker');
  const reply = await w.registerAndWait(`${w.id}-other`);
  assert.equal(reply.type, 'RegisterWorkerFailed');
  assert.match(reply.message as string, /same address/);
  assert.match(reply.message as string, new RegExp(w.address.replace(/\./g, '\\.')));
  const s = await client.state();
  assert.deepEqual(
    s.workers.map((x) => [x.id, x.state]),
    [[w.id, 'ALIVE']],
  );
});

test('a DEAD worker at the same host:port is dropped when a worker registers there again', {
  timeout: 60_000,
}, async (t) => {
  const master = await startMaster(t);
  const client = await connectClient(t, master.url);
  const first = await MockWorker.start(t, master.url);
  assert.equal((await first.registerAndWait()).type, 'RegisteredWorker');
  const port = first.port;
  // Its env goes away: the master sees the disconnect and marks the worker DEAD.
  await first.stop();
  await client.waitFor((s) => workerIn(s, first.id)?.state === 'DEAD');
  // A new worker process on the same port, with a new id (a restarted worker).
  const second = await MockWorker.start(t, master.url, {
    port,
    id: `worker-20990101000000-127.0.0.1-${port}`,
  });
  assert.equal((await second.registerAndWait()).type, 'RegisteredWorker');
  const s = await client.waitFor(
    (s) => workerIn(s, second.id)?.state === 'ALIVE' && !workerIn(s, first.id),
  );
  assert.deepEqual(
    s.workers.map((w) => w.id),
    [second.id],
  );
  assert.deepEqual(await client.state(), s);
});

test('a heartbeat from a worker the master never knew is ignored, with a warning', {
  timeout: 60_000,
}, async (t) => {
  const master = await startMaster(t);
  const client = await connectClient(t, master.url);
  const w = await MockWorker.start(t, master.url);
  const from = master.stderr.length;
  w.heartbeat('worker-20000101000000-10.0.0.1-1');
  await master.waitForStderr(
    /WARN Master: Got heartbeat from unregistered worker worker-20000101000000-10\.0\.0\.1-1\. This worker was never registered, so ignoring the heartbeat\./,
    from,
  );
  await w.barrier();
  assert.deepEqual(w.endpoint.received, [], 'no ReconnectWorker nor anything else');
  assert.deepEqual((await client.state()).workers, []);
});

test('WorkerLatestState: the master kills executors and drivers it does not know, and only those', {
  timeout: 60_000,
}, async (t) => {
  const master = await startMaster(t);
  const w = await MockWorker.start(t, master.url, { cores: 4, memory: 4096 });
  assert.equal((await w.registerAndWait()).type, 'RegisteredWorker');
  // One executor the master launched itself: known, so never killed.
  const app = await MockApp.start(t, master.url);
  const appId = await app.register(appDescription({ maxCores: 1 }));
  const launch = await w.endpoint.next('LaunchExecutor');
  assert.equal(launch.appId, appId);
  const from = w.endpoint.mark;
  w.sendLatestState({
    executors: [
      { appId: 'app-20000101000000-0007', execId: 3 },
      { appId: 'app-20000101000000-0008', execId: 0 },
    ],
    driverIds: ['driver-20000101000000-0001'],
  });
  await w.barrier();
  const kills = w.endpoint.all('KillExecutor', from).map((m) => `${m.appId}/${m.execId}`);
  assert.deepEqual(kills.sort(), ['app-20000101000000-0007/3', 'app-20000101000000-0008/0']);
  assert.ok(
    w.endpoint.all('KillExecutor', from).every((m) => m.masterUrl === master.url),
    'KillExecutor carries the master URL',
  );
  assert.deepEqual(
    w.endpoint.all('KillDriver', from).map((m) => m.driverId),
    ['driver-20000101000000-0001'],
  );
});

test('WorkerLatestState from a worker the master does not know is ignored', {
  timeout: 60_000,
}, async (t) => {
  const master = await startMaster(t);
  const w = await MockWorker.start(t, master.url);
  const from = master.stderr.length;
  w.sendLatestState({ executors: [{ appId: 'app-20000101000000-0001', execId: 0 }] });
  await master.waitForStderr(/Worker state from unknown worker/, from);
  await w.barrier();
  assert.deepEqual(w.endpoint.received, []);
});
