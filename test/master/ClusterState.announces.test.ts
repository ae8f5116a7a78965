/**
 * Every change of the master's tables reaches its subscribers without anyone pushing by hand:
 * ClusterState tells its listener, here a real StateBroadcaster with a subscriber, and the
 * events the subscriber gets, applied to what it had (shared/applyEvent.ts, as every client
 * does), must give exactly the tables' new summaries. Each method of ClusterState is listed as
 * a change (called on a cluster with one of everything, then checked so) or as a lookup (called,
 * and checked to change nothing and push nothing); a method in neither list fails the test, so
 * a new one that forgets to announce cannot slip by.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ApplicationInfo } from '../../backend/master/ApplicationInfo.js';
import { ClusterState } from '../../backend/master/ClusterState.js';
import { DriverInfo } from '../../backend/master/DriverInfo.js';
import { StateBroadcaster } from '../../backend/master/StateBroadcaster.js';
import { WorkerInfo } from '../../backend/master/WorkerInfo.js';
import { MAX_WORKERS } from '../../backend/protocol/bounds.js';
import { wickProtocol } from '../../backend/protocol/index.js';
import type { MessageOf, WireMessage } from '../../backend/protocol/registry.js';
import type { MasterStateEvent, MasterStateResponse } from '../../backend/protocol/state.js';
import { type RefTransport, RpcEndpointRef } from '../../backend/rpc/RpcEndpointRef.js';
import { applyEvent } from '../../backend/shared/applyEvent.js';
import { appDescription } from '../helpers/masterMocks.js';

type State = MessageOf<typeof MasterStateResponse>;
type Event = MessageOf<typeof MasterStateEvent>;

function setup() {
  const sent: WireMessage[] = [];
  const transport: RefTransport = {
    send: (ref, message) => {
      if (ref.name === 'Mirror') sent.push(message);
    },
    ask: () => assert.fail('nothing asks'),
    flush: () => {},
    protocol: wickProtocol,
  };
  const broadcaster = new StateBroadcaster();
  broadcaster.subscribe(new RpcEndpointRef('client-1', 'Mirror', transport));
  const state = new ClusterState({
    retainedApplications: 2,
    retainedDrivers: 2,
    listener: broadcaster,
  });
  const ref = (address: string, name: string) => new RpcEndpointRef(address, name, transport);
  const worker = (id: string, port: number) =>
    new WorkerInfo(id, '127.0.0.1', port, 8, 8192, ref(`127.0.0.1:${port}`, 'Worker'), '', 0);
  const app = (id: string, port: number) =>
    new ApplicationInfo(id, appDescription(), ref(`127.0.0.1:${port}`, 'AppClient'), 0, 8);
  const driver = (id: string) =>
    new DriverInfo(
      id,
      { appPath: '/x.js', mem: 128, cores: 1, supervise: true, command: { argv: [], env: {} } },
      0,
    );
  // One of everything: an ALIVE, an UNKNOWN and a DEAD worker; a WAITING, an UNKNOWN and a
  // finished app; an executor; a waiting, a running and a finished driver.
  const w = worker('w-alive', 1001);
  const unknown = worker('w-unknown', 1002);
  const dead = worker('w-dead', 1003);
  state.addWorker(w);
  state.addWorker(unknown, 'UNKNOWN');
  state.addWorker(dead);
  state.markWorkerDead(dead);
  const a = app('app-a', 2001);
  const recovered = app('app-unknown', 2002);
  const done = app('app-done', 2003);
  state.addApp(a);
  state.addApp(recovered, 'UNKNOWN');
  state.addApp(done);
  state.finishApp(done, { state: 'FINISHED', now: 1 });
  const exec = state.addExecutor(a, w, 2, 1);
  const waiting = driver('driver-waiting');
  const running = driver('driver-running');
  const finished = driver('driver-done');
  state.addDriver(waiting, true);
  state.addDriver(running, true);
  state.driverRunsOn(running, w);
  state.addDriver(finished, false);
  state.finishDriver(finished, 'FINISHED');
  const fixture = {
    w,
    unknown,
    dead,
    a,
    recovered,
    done,
    exec,
    waiting,
    running,
    worker,
    app,
    driver,
  };
  return { state, broadcaster, sent, fixture };
}

type Setup = ReturnType<typeof setup>;
type Fixture = Setup['fixture'];

/** What the subscriber holds: the tables' summaries, as a snapshot lists them. */
function snapshot(state: ClusterState, seq: number): State {
  return {
    type: 'MasterStateResponse',
    url: 'wick://m:7077',
    webUiUrl: 'http://m:8080',
    status: 'ALIVE',
    seq,
    ...structuredClone(state.summaries()),
  };
}

/** Sorted by id, as applying events may order entries differently from the tables. */
function tables(s: State) {
  const byId = <T extends { id: string | number }>(list: T[]) =>
    [...list].sort((x, y) => String(x.id).localeCompare(String(y.id)));
  return {
    workers: byId(s.workers),
    activeApps: byId(s.activeApps),
    completedApps: byId(s.completedApps),
    activeDrivers: byId(s.activeDrivers),
    completedDrivers: byId(s.completedDrivers),
  };
}

/** The changes: each called on the fixture, and must change what the tables show. */
const changes: Record<string, (s: ClusterState, f: Fixture) => void> = {
  addWorker: (s, f) => s.addWorker(f.worker('w-new', 1009)),
  workerHeartbeat: (s, f) => s.workerHeartbeat(f.w, 42),
  workerReregistered: (s, f) => s.workerReregistered(f.unknown, 42),
  markWorkerDead: (s, f) => s.markWorkerDead(f.w),
  decommissionWorker: (s, f) => s.decommissionWorker(f.w),
  forgetWorker: (s, f) => s.forgetWorker(f.dead),
  forgetDeadWorkersAt: (s, f) => s.forgetDeadWorkersAt(f.dead.host, f.dead.port),
  // Full (see prepare): the oldest DEAD worker is forgotten to make room.
  roomForWorker: (s) => s.roomForWorker(),
  addApp: (s, f) => s.addApp(f.app('app-new', 2009)),
  appReregistered: (s, f) => s.appReregistered(f.recovered),
  setAppState: (s, f) => s.setAppState(f.a, 'RUNNING'),
  setWaitingReason: (s, f) => s.setWaitingReason(f.a, 'no worker has 1 free core'),
  setAppProgress: (s, f) =>
    s.setAppProgress(f.a, {
      jobs: { active: 1, succeeded: 0, failed: 0 },
      stages: { active: 0, complete: 0, failed: 0 },
      activeJobs: [],
      activeStages: [],
      lastUpdated: 7,
    }),
  finishApp: (s, f) => s.finishApp(f.a, { state: 'FAILED', now: 9, failure: { message: 'x' } }),
  addExecutor: (s, f) => s.addExecutor(f.a, f.w, 1, 5),
  setExecutorState: (s, f) => s.setExecutorState(f.a, f.exec, 5, { state: 'RUNNING' }),
  removeExecutor: (s, f) => s.removeExecutor(f.a, f.exec),
  addDriver: (s, f) => s.addDriver(f.driver('driver-new'), true),
  driverRunsOn: (s, f) => s.driverRunsOn(f.waiting, f.w),
  setDriverState: (s, f) => s.setDriverState(f.running, 'RELAUNCHING'),
  finishDriver: (s, f) => s.finishDriver(f.running, 'KILLED'),
  clear: (s) => s.clear(),
};

/** What a change needs first, done before the subscriber's copy is taken. */
const prepare: Record<string, (s: ClusterState, f: Fixture) => void> = {
  roomForWorker: (s, f) => {
    const missing = MAX_WORKERS - s.allWorkers().length;
    for (let i = 0; i < missing; i++) s.addWorker(f.worker(`w-filler-${i}`, 10_000 + i));
  },
};

/** The lookups (and id counters): each called on the fixture, and must change nothing shown. */
const lookups: Record<string, (s: ClusterState, f: Fixture) => unknown> = {
  workerById: (s) => s.workerById('w-alive'),
  workerByAddress: (s) => s.workerByAddress('127.0.0.1:1001'),
  knowsWorker: (s) => s.knowsWorker('w-dead'),
  allWorkers: (s) => s.allWorkers(),
  registeredWorkers: (s) => [...s.registeredWorkers()],
  nextAppId: (s) => s.nextAppId(0),
  reserveAppId: (s) => s.reserveAppId('app-20250101000000-0042'),
  appById: (s) => s.appById('app-a'),
  appByAddress: (s) => s.appByAddress('127.0.0.1:2001'),
  activeApps: (s) => s.activeApps(),
  waitingApps: (s) => s.waitingApps(),
  completedAppById: (s) => s.completedAppById('app-done'),
  nextDriverId: (s) => s.nextDriverId(0),
  reserveDriverId: (s) => s.reserveDriverId('driver-20250101000000-0042'),
  driverById: (s) => s.driverById('driver-running'),
  findDriver: (s) => s.findDriver('driver-done'),
  latestRunOf: (s) => s.latestRunOf('driver-running'),
  activeDrivers: (s) => s.activeDrivers(),
  waitingDrivers: (s) => s.waitingDrivers(),
  isWaiting: (s, f) => s.isWaiting(f.waiting),
  anyUnknown: (s) => s.anyUnknown(),
  summaries: (s) => s.summaries(),
  page: (s) => s.page(undefined, 2, 1 << 20),
  // What placement has to look at again: bookkeeping of its own, nothing any summary shows.
  placementChanges: (s) => s.placementChanges(),
  placementSettled: (s) => s.placementSettled(),
  placementMayChange: (s) => s.placementMayChange(),
};

/** Private helpers, called only by the methods above. */
const internal = ['constructor', 'notDead', 'entriesAfter'];

test('every method of ClusterState is listed as a change or a lookup', () => {
  const methods = Object.getOwnPropertyNames(ClusterState.prototype).filter(
    (name) =>
      typeof Object.getOwnPropertyDescriptor(ClusterState.prototype, name)?.value === 'function',
  );
  const listed = [...Object.keys(changes), ...Object.keys(lookups), ...internal];
  assert.deepEqual(
    methods.filter((m) => !listed.includes(m)),
    [],
    'a new method of ClusterState: list it among the changes (and make it announce) or the lookups',
  );
  assert.deepEqual(
    listed.filter((m) => !methods.includes(m)),
    [],
    'listed but gone from ClusterState',
  );
});

for (const [name, change] of Object.entries(changes)) {
  test(`ClusterState.${name} reaches a subscriber: its events turn the old state into the new`, () => {
    const { state, broadcaster, sent, fixture } = setup();
    prepare[name]?.(state, fixture);
    broadcaster.flush();
    sent.length = 0;
    const mirror = snapshot(state, broadcaster.seq);
    const before = tables(mirror);
    change(state, fixture);
    broadcaster.flush();
    const after = tables(snapshot(state, broadcaster.seq));
    assert.notDeepEqual(after, before, `${name} changed nothing the tables show`);
    assert.ok(sent.length > 0, `${name} pushed nothing`);
    for (const event of sent) applyEvent(mirror, event as Event);
    assert.deepEqual(tables(mirror), after, `the subscriber's copy after ${name}`);
  });
}

/** The changes that cannot let a waiting app or driver fit where it did not. */
const placementNeutral = new Set(['workerHeartbeat', 'setWaitingReason', 'setAppProgress']);

for (const name of Object.keys(changes)) {
  test(`ClusterState.${name} tells placement what it has to look at again`, () => {
    const { state, fixture } = setup();
    prepare[name]?.(state, fixture);
    state.placementSettled();
    changes[name]?.(state, fixture);
    const { everything, added } = state.placementChanges();
    if (name === 'addWorker') {
      // Only the new worker can take anything new: placement looks at it alone.
      assert.equal(everything, false);
      assert.deepEqual(
        added.map((w) => w.id),
        ['w-new'],
      );
    } else if (placementNeutral.has(name)) {
      assert.deepEqual({ everything, added }, { everything: false, added: [] });
    } else {
      assert.equal(everything, true, `${name} may let something fit: every worker counts again`);
    }
  });
}

test('an executor limit raised outside the tables makes placement look at every worker', () => {
  const { state } = setup();
  state.placementSettled();
  state.placementMayChange();
  assert.equal(state.placementChanges().everything, true);
});

test('the lookups change nothing the tables show, and push nothing', () => {
  for (const [name, lookup] of Object.entries(lookups)) {
    const { state, broadcaster, sent, fixture } = setup();
    broadcaster.flush();
    sent.length = 0;
    const before = tables(snapshot(state, 0));
    lookup(state, fixture);
    broadcaster.flush();
    assert.deepEqual(tables(snapshot(state, 0)), before, name);
    assert.deepEqual(sent, [], `${name} pushed`);
  }
});

test('no other file of the master writes what a summary shows, nor pushes to the subscribers', () => {
  const dir = fileURLToPath(new URL('../../backend/master/', import.meta.url));
  const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) =>
    f.endsWith('.ts'),
  );
  // The tables, the entities themselves, the broadcaster and the Master's own state.
  const allowed = new Set([
    'ClusterState.ts',
    'WorkerInfo.ts',
    'ApplicationInfo.ts',
    'DriverInfo.ts',
    'ExecutorDesc.ts',
    'StateBroadcaster.ts',
    'Master.ts',
  ]);
  const writes =
    /\.(state|lastHeartbeat|waitingReason|endTime|failure|exception|worker|coresUsed|memoryUsed)\s*=[^=]|broadcaster\.|\.setState\(|(?<!cluster|persistence)\.(add|remove)(Executor|Driver)\(/;
  const bad = files
    .filter((f) => !allowed.has(f))
    .flatMap((f) =>
      readFileSync(join(dir, f), 'utf8')
        .split('\n')
        .map((line, i) => ({ line, at: `${f}:${i + 1}` }))
        .filter(({ line }) => writes.test(line) && !/^\s*(\/\/|\*)/.test(line))
        .map(({ line, at }) => `${at}: ${line.trim()}`),
    );
  assert.deepEqual(bad, [], 'change the tables through ClusterState, which announces');
});
