/**
 * The Master's tables on their own: the invariants ClusterState keeps between its indexes, the
 * FIFO and the completed lists, the ids it gives out, and what it tells of the entries it forgets.
 * No RpcEnv: its refs only carry addresses (nothing here sends).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApplicationInfo } from '../../backend/master/ApplicationInfo.js';
import { ClusterState } from '../../backend/master/ClusterState.js';
import { DriverInfo } from '../../backend/master/DriverInfo.js';
import { WorkerInfo } from '../../backend/master/WorkerInfo.js';
import { MAX_WORKERS } from '../../backend/protocol/bounds.js';
import { wickProtocol } from '../../backend/protocol/index.js';
import { type RefTransport, RpcEndpointRef } from '../../backend/rpc/RpcEndpointRef.js';
import { appDescription } from '../helpers/masterMocks.js';

const nowhere: RefTransport = {
  send: () => assert.fail('ClusterState sends nothing'),
  ask: () => assert.fail('ClusterState asks nothing'),
  flush: () => {},
  protocol: wickProtocol,
};

const ref = (address: string, name = 'Worker') => new RpcEndpointRef(address, name, nowhere);

function worker(id: string, port: number, address = `127.0.0.1:${port}`): WorkerInfo {
  return new WorkerInfo(id, '127.0.0.1', port, 4, 4096, ref(address), '', 0);
}

function app(id: string, address: string): ApplicationInfo {
  return new ApplicationInfo(id, appDescription(), ref(address, 'AppClient'), 0, 8);
}

function driver(id: string): DriverInfo {
  return new DriverInfo(
    id,
    { appPath: '/x.js', mem: 128, cores: 1, supervise: false, command: { argv: [], env: {} } },
    0,
  );
}

function cluster(retained = 10) {
  const forgotten = { workers: [] as string[], apps: [] as string[], drivers: [] as string[] };
  const state = new ClusterState({
    retainedApplications: retained,
    retainedDrivers: retained,
    listener: {
      worker: () => {},
      workerHeartbeat: () => {},
      app: () => {},
      driver: () => {},
      workerRemoved: (id) => forgotten.workers.push(id),
      appRemoved: (id) => forgotten.apps.push(id),
      driverRemoved: (id) => forgotten.drivers.push(id),
    },
  });
  return { state, forgotten };
}

const finished = { state: 'FINISHED' as const, now: 1 };

test('a registered worker is found by id and address; a DEAD one is known until forgotten', () => {
  const { state, forgotten } = cluster();
  const w = worker('w1', 1001);
  state.addWorker(w);
  assert.equal(state.workerById('w1'), w);
  assert.equal(state.workerByAddress('127.0.0.1:1001'), w);
  assert.deepEqual([...state.registeredWorkers()], [w]);

  state.markWorkerDead(w);
  assert.equal(w.state, 'DEAD');
  assert.equal(state.workerById('w1'), undefined);
  assert.equal(state.workerByAddress('127.0.0.1:1001'), undefined);
  assert.deepEqual([...state.registeredWorkers()], []);
  assert.ok(state.knowsWorker('w1'));
  assert.deepEqual(state.allWorkers(), [w]);
  assert.deepEqual(forgotten.workers, [], 'a DEAD worker stays listed');

  state.forgetWorker(w);
  assert.ok(!state.knowsWorker('w1'));
  assert.deepEqual(forgotten.workers, ['w1']);
  state.forgetWorker(w);
  assert.deepEqual(forgotten.workers, ['w1'], 'forgotten once');
});

test('a second worker at a registered id or address is refused, naming both', () => {
  const { state } = cluster();
  state.addWorker(worker('w1', 1001));
  assert.throws(
    () => state.addWorker(worker('w2', 1001)),
    /w2 at 127\.0\.0\.1:1001: w1 .*registered/,
  );
  assert.throws(
    () => state.addWorker(worker('w1', 1002)),
    /w1 at 127\.0\.0\.1:1002: w1 at 127\.0\.0\.1:1001/,
  );
  assert.deepEqual(
    state.allWorkers().map((w) => w.id),
    ['w1'],
  );
});

test('a worker starting at a host:port replaces only the DEAD workers there', () => {
  const { state, forgotten } = cluster();
  const dead = worker('old', 1001);
  const deadElsewhere = worker('other', 1002);
  const alive = worker('alive', 1003);
  for (const w of [dead, deadElsewhere, alive]) state.addWorker(w);
  state.markWorkerDead(dead);
  state.markWorkerDead(deadElsewhere);
  state.forgetDeadWorkersAt('127.0.0.1', 1001);
  state.forgetDeadWorkersAt('127.0.0.1', 1003);
  assert.deepEqual(forgotten.workers, ['old']);
  assert.deepEqual(
    state.allWorkers().map((w) => w.id),
    ['other', 'alive'],
  );
  // The address is free again for a new worker.
  state.addWorker(worker('new', 1001));
  assert.equal(state.workerByAddress('127.0.0.1:1001')?.id, 'new');
});

test('applications: one per driver address, FIFO while active, then kept among the completed', () => {
  const { state } = cluster();
  const a = app('app-a', '127.0.0.1:2001');
  const b = app('app-b', '127.0.0.1:2002');
  assert.ok(state.addApp(a));
  assert.ok(state.addApp(b));
  assert.ok(!state.addApp(app('app-c', '127.0.0.1:2001')), 'the address has an app');
  assert.deepEqual(state.waitingApps(), [a, b]);
  assert.equal(state.appByAddress('127.0.0.1:2002'), b);

  assert.ok(state.finishApp(a, finished));
  assert.ok(!state.finishApp(a, finished), 'finished once');
  assert.equal(state.appById('app-a'), undefined);
  assert.equal(state.appByAddress('127.0.0.1:2001'), undefined);
  assert.deepEqual(state.waitingApps(), [b]);
  assert.deepEqual(state.activeApps(), [b]);
  const s = state.summaries();
  assert.deepEqual(
    s.completedApps.map((x) => x.id),
    ['app-a'],
  );
  assert.deepEqual(
    s.activeApps.map((x) => x.id),
    ['app-b'],
  );
});

test('a full completed list drops its oldest tenth, and says which it forgot', () => {
  const { state, forgotten } = cluster(20);
  for (let i = 0; i < 21; i++) {
    const a = app(`app-${i}`, `127.0.0.1:${3000 + i}`);
    state.addApp(a);
    state.finishApp(a, finished);
    const d = driver(`driver-${i}`);
    state.addDriver(d, false);
    state.finishDriver(d, 'FINISHED');
  }
  assert.deepEqual(forgotten.apps, ['app-0', 'app-1']);
  assert.deepEqual(forgotten.drivers, ['driver-0', 'driver-1']);
  const s = state.summaries();
  assert.equal(s.completedApps.length, 19);
  assert.equal(s.completedApps[0]?.id, 'app-2');
  assert.equal(s.completedDrivers.length, 19);
  assert.equal(state.findDriver('driver-1'), undefined);
  assert.equal(state.findDriver('driver-20')?.id, 'driver-20');
});

test('drivers: active until finished, waiting only while queued', () => {
  const { state } = cluster();
  const d = driver('driver-1');
  state.addDriver(d, false);
  assert.ok(!state.isWaiting(d), 'added, not queued');
  state.addDriver(d, true);
  assert.ok(state.isWaiting(d));
  assert.deepEqual(state.waitingDrivers(), [d]);
  const w = worker('w1', 1001);
  state.addWorker(w);
  state.driverRunsOn(d, w);
  assert.deepEqual(state.waitingDrivers(), []);
  assert.equal(d.state, 'RUNNING');
  assert.equal(d.worker, w);
  assert.equal(w.coresUsed, 1, 'the worker holds its cores');
  assert.equal(state.driverById('driver-1'), d);
  state.addDriver(d, true);
  assert.ok(state.finishDriver(d, 'FINISHED'));
  assert.equal(w.coresUsed, 0, 'its worker freed what it held');
  assert.deepEqual(state.waitingDrivers(), [], 'a finished driver waits no more');
  assert.equal(state.driverById('driver-1'), undefined);
  assert.equal(state.findDriver('driver-1'), d);
  assert.deepEqual(state.activeDrivers(), []);
});

test('ids are numbered in order, after any recovered one', () => {
  const { state } = cluster();
  const now = new Date(2025, 0, 2, 3, 4, 5).getTime();
  assert.equal(state.nextAppId(now), 'app-20250102030405-0000');
  assert.equal(state.nextDriverId(now), 'driver-20250102030405-0000');
  state.reserveAppId('app-20250101000000-0007');
  state.reserveAppId('app-20250101000000-0003');
  state.reserveDriverId('driver-20250101000000-0041');
  state.reserveDriverId('driver-without-a-number');
  assert.equal(state.nextAppId(now), 'app-20250102030405-0008');
  assert.equal(state.nextDriverId(now), 'driver-20250102030405-0042');
});

test('recovery waits while a worker or an application is UNKNOWN', () => {
  const { state } = cluster();
  const w = worker('w1', 1001);
  const a = app('app-a', '127.0.0.1:2001');
  assert.ok(!state.anyUnknown());
  state.addWorker(w, 'UNKNOWN');
  state.addApp(a, 'UNKNOWN');
  assert.ok(state.anyUnknown());
  state.workerReregistered(w, 1);
  assert.ok(state.anyUnknown(), 'the app has not answered');
  state.appReregistered(a);
  assert.ok(!state.anyUnknown());
});

test('clear forgets every entry, telling of each, and keeps numbering ids', () => {
  const { state, forgotten } = cluster();
  const w = worker('w1', 1001);
  state.addWorker(w);
  const done = app('app-done', '127.0.0.1:2001');
  state.addApp(done);
  state.finishApp(done, finished);
  state.addApp(app('app-active', '127.0.0.1:2002'));
  const d = driver('driver-waiting');
  state.addDriver(d, true);
  const now = Date.now();
  state.nextAppId(now);
  state.clear();
  assert.deepEqual(forgotten, {
    workers: ['w1'],
    apps: ['app-active', 'app-done'],
    drivers: ['driver-waiting'],
  });
  assert.deepEqual(state.summaries(), {
    workers: [],
    activeApps: [],
    completedApps: [],
    activeDrivers: [],
    completedDrivers: [],
  });
  assert.deepEqual(state.waitingApps(), []);
  assert.deepEqual(state.waitingDrivers(), []);
  assert.equal(state.workerByAddress('127.0.0.1:1001'), undefined);
  assert.match(state.nextAppId(now), /-0001$/);
});

// Pages of the state ---------------------------------------------------------------------------

/** Every page from the first, `limit` entries each (and `maxBytes`), as ids per table. */
function allPages(state: ClusterState, limit: number, maxBytes = 1 << 30) {
  const pages = [];
  let after: Parameters<ClusterState['page']>[0];
  do {
    const page = state.page(after, limit, maxBytes);
    pages.push(page);
    after = page.next;
  } while (after);
  return pages;
}

test('pages list every entry of every table once, in the order of a whole snapshot', () => {
  const { state } = cluster(100);
  for (let i = 0; i < 7; i++) state.addWorker(worker(`w${i}`, 1000 + i));
  for (let i = 0; i < 5; i++) state.addApp(app(`app-${i}`, `127.0.0.1:${2000 + i}`));
  state.finishApp(state.appById('app-1') as ApplicationInfo, finished);
  for (let i = 0; i < 3; i++) state.addDriver(driver(`driver-${i}`), false);
  const whole = state.summaries();
  for (const limit of [1, 2, 3, 16, 100]) {
    const pages = allPages(state, limit);
    const joined = {
      workers: pages.flatMap((p) => p.summaries.workers),
      activeApps: pages.flatMap((p) => p.summaries.activeApps),
      completedApps: pages.flatMap((p) => p.summaries.completedApps),
      activeDrivers: pages.flatMap((p) => p.summaries.activeDrivers),
      completedDrivers: pages.flatMap((p) => p.summaries.completedDrivers),
    };
    assert.deepEqual(joined, whole, `limit ${limit}`);
    const entries = 7 + 5 + 3;
    assert.equal(pages.length, Math.ceil(entries / limit), `limit ${limit}: no empty last page`);
    for (const p of pages) {
      const n = Object.values(p.summaries).reduce((k, list) => k + list.length, 0);
      assert.ok(n >= 1 && n <= limit);
    }
  }
});

test('a page stops at about maxBytes, but holds at least one entry however large', () => {
  const { state } = cluster();
  for (let i = 0; i < 10; i++) state.addWorker(worker(`w${i}`, 1000 + i));
  const one = JSON.stringify(state.summaries().workers[0]).length;
  const pages = allPages(state, 100, one * 3);
  assert.deepEqual(
    pages.map((p) => p.summaries.workers.length),
    [3, 3, 3, 1],
  );
  assert.deepEqual(
    allPages(state, 100, 1).map((p) => p.summaries.workers.length),
    Array(10).fill(1),
  );
});

test('pages read while entries come and go skip none that stayed and list none twice', () => {
  const { state } = cluster(100);
  for (let i = 0; i < 6; i++) state.addWorker(worker(`w${i}`, 1000 + i));
  const first = state.page(undefined, 2, 1 << 30);
  assert.deepEqual(
    first.summaries.workers.map((w) => w.id),
    ['w0', 'w1'],
  );
  // One already listed goes, one not yet listed goes, and one comes back after it went.
  state.forgetWorker(markDead(state, 'w1'));
  state.forgetWorker(markDead(state, 'w3'));
  const w0 = state.workerById('w0') as WorkerInfo;
  state.markWorkerDead(w0);
  state.addWorker(worker('w0', 1000, '127.0.0.1:3000'));
  state.addWorker(worker('w9', 1009));
  const rest = allPagesFrom(state, first.next, 2);
  assert.deepEqual(
    rest.flatMap((p) => p.summaries.workers.map((w) => w.id)),
    ['w2', 'w4', 'w5', 'w0', 'w9'],
    'the re-registered w0 comes again, at the end, as a new entry',
  );
});

function markDead(state: ClusterState, id: string): WorkerInfo {
  const w = state.workerById(id) as WorkerInfo;
  state.markWorkerDead(w);
  return w;
}

function allPagesFrom(
  state: ClusterState,
  after: Parameters<ClusterState['page']>[0],
  limit: number,
) {
  const pages = [];
  while (after) {
    const page = state.page(after, limit, 1 << 30);
    pages.push(page);
    after = page.next;
  }
  return pages;
}

test('forgetDeadWorkersAt forgets the DEAD workers at that host:port only, by its index', () => {
  const { state, forgotten } = cluster();
  const a = worker('wa', 1001);
  const b = worker('wb', 1002);
  state.addWorker(a);
  state.addWorker(b);
  state.markWorkerDead(a);
  state.markWorkerDead(b);
  state.forgetDeadWorkersAt('127.0.0.1', 1001);
  assert.deepEqual(forgotten.workers, ['wa']);
  assert.ok(state.knowsWorker('wb'));
  // A DEAD worker that registers again under its id is alive, not forgotten with its host:port.
  state.addWorker(worker('wb', 1002));
  state.forgetDeadWorkersAt('127.0.0.1', 1002);
  assert.deepEqual(forgotten.workers, ['wa']);
  assert.equal(state.workerById('wb')?.state, 'ALIVE');
});

test('known workers stay within MAX_WORKERS: the oldest DEAD one makes room, else registration is refused', () => {
  const { state, forgotten } = cluster();
  // roomForWorker is about the count only: fill the table without building 100,000 workers' worth
  // of summaries.
  for (let i = 0; i < MAX_WORKERS; i++) state.addWorker(worker(`w${i}`, i + 1));
  assert.match(state.roomForWorker() ?? '', new RegExp(`the most it takes \\(${MAX_WORKERS}\\)`));
  state.markWorkerDead(state.workerById('w5') as WorkerInfo);
  state.markWorkerDead(state.workerById('w7') as WorkerInfo);
  assert.equal(state.roomForWorker(), undefined);
  assert.deepEqual(forgotten.workers, ['w5']);
});
