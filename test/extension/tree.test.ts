import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { MasterState } from '../../backend/agent/protocol.js';
import { rememberDriver } from '../../extension/logs/knownDrivers.js';
import {
  children,
  findApp,
  item,
  type Model,
  type Node,
  roots,
} from '../../extension/tree/model.js';

const worker = (id: string, state = 'ALIVE', extra = {}) => ({
  id,
  host: '127.0.0.1',
  port: 4000,
  webUiAddress: 'http://127.0.0.1:8081',
  cores: 2,
  coresUsed: 1,
  memory: 2048,
  memoryUsed: 512,
  state,
  lastHeartbeat: 0,
  executors: [],
  driverIds: [],
  ...extra,
});

const app = (id: string, state: string, extra = {}) => ({
  id,
  name: 'Wick Pi',
  user: 'me',
  coresGranted: 1,
  memoryPerExecutorMB: 512,
  state,
  startTime: 1_000,
  driver: { address: '127.0.0.1:5000', name: 'AppClient' },
  executors: [],
  removedExecutors: [],
  ...extra,
});

const exec = {
  appId: 'app-1',
  id: 0,
  workerId: 'worker-a',
  workerHostPort: '127.0.0.1:4000',
  cores: 1,
  memory: 512,
  state: 'RUNNING',
  history: [],
};

function model(over: Partial<MasterState> = {}): Model {
  const state = {
    url: 'wick://127.0.0.1:7077',
    webUiUrl: 'http://127.0.0.1:8080',
    status: 'ALIVE',
    workers: [
      worker('worker-a', 'ALIVE', { executors: [{ appId: 'app-1', execId: 0 }] }),
      worker('worker-b', 'DEAD'),
    ],
    activeApps: [
      app('app-1', 'RUNNING', { executors: [exec] }),
      app('app-2', 'WAITING', { waitingReason: 'no worker has 4 GiB free' }),
    ],
    completedApps: [app('app-0', 'FINISHED', { endTime: 61_000 })],
    activeDrivers: [],
    completedDrivers: [],
    seq: 7,
    ...over,
  } as MasterState;
  return {
    connection: { kind: 'connected', url: state.url, webUiUrl: state.webUiUrl, local: true },
    state,
    now: 5_000,
  };
}

test('disconnected: no roots, so the welcome view shows', () => {
  assert.deepEqual(roots('cluster', { connection: { kind: 'disconnected' }, now: 0 }), []);
});

test('an unreachable master is a message node with Retry, never an empty tree', () => {
  const [n] = roots('cluster', {
    connection: {
      kind: 'error',
      target: 'wick://h:7077',
      message: 'connect ECONNREFUSED 1.2.3.4:7077\nmore',
    },
    now: 0,
  });
  const it = item(n as Node, { connection: { kind: 'disconnected' }, now: 0 });
  assert.equal(it.label, 'Cannot reach wick://h:7077: connect ECONNREFUSED 1.2.3.4:7077 — Retry');
  assert.equal(it.command?.command, 'wick.refresh');
  assert.equal(it.contextValue, 'wick.message.error');
});

test('cluster: master → workers with state, cores and memory; contextValue by state', () => {
  const m = model();
  const [master] = roots('cluster', m);
  const mi = item(master as Node, m);
  assert.equal(mi.label, 'wick://127.0.0.1:7077');
  assert.match(mi.description ?? '', /ALIVE · 1\/2 workers · 1\/2 cores · local/);
  assert.equal(mi.contextValue, 'wick.master.alive.local');
  const workers = children(master as Node, m);
  assert.deepEqual(
    workers.map((w) => item(w, m).contextValue),
    ['wick.worker.alive', 'wick.worker.dead'],
  );
  // The address as the label, state and cores as the description: no truncated worker id.
  assert.equal(item(workers[0] as Node, m).label, '127.0.0.1:4000');
  assert.equal(item(workers[0] as Node, m).description, 'ALIVE · 1/2 cores · 512 MiB/2 GiB');
  const [e] = children(workers[0] as Node, m);
  assert.equal(item(e as Node, m).label, 'Wick Pi · executor 0');
  assert.equal(item(e as Node, m).description, 'RUNNING · 1 core · app-1');
  assert.equal(item(workers[1] as Node, m).icon?.color, 'errorForeground');
});

test('cluster: every master of the election is a node with its state; one master, one node', () => {
  assert.equal(roots('cluster', model()).length, 1);
  const m = model({
    masters: [
      { url: 'wick://127.0.0.1:7077', status: 'ALIVE' },
      { url: 'wick://127.0.0.1:7078', status: 'STANDBY' },
    ],
  });
  const nodes = roots('cluster', m);
  assert.deepEqual(
    nodes.map((n) => n.kind),
    ['master', 'peer'],
  );
  const peer = item(nodes[1] as Node, m);
  assert.equal(peer.label, 'wick://127.0.0.1:7078');
  assert.equal(peer.description, 'STANDBY');
  assert.equal(peer.contextValue, 'wick.peer.standby');
  assert.equal(peer.collapsible, 'none');
  assert.equal(peer.icon?.color, 'charts.yellow');
  assert.notEqual(peer.id, item(nodes[0] as Node, m).id);
  assert.deepEqual(children(nodes[1] as Node, m), []);
});

test('applications: groups, waiting apps say why, executors carry stdout/stderr', () => {
  const m = model();
  const groups = roots('applications', m);
  assert.deepEqual(
    groups.map((g) => [item(g, m).label, item(g, m).description]),
    [
      ['Running', '1'],
      ['Waiting', '1'],
      ['Completed', '1'],
    ],
  );
  const [waiting] = children(groups[1] as Node, m);
  assert.match(item(waiting as Node, m).description ?? '', /WAITING: no worker has 4 GiB free/);
  assert.equal(item(waiting as Node, m).contextValue, 'wick.app.waiting');
  const [running] = children(groups[0] as Node, m);
  assert.equal(item(running as Node, m).contextValue, 'wick.app.running');
  assert.equal(item(running as Node, m).description, 'RUNNING · 1 core · 4s · app-1');
  const [e] = children(running as Node, m);
  const logs = children(e as Node, m);
  assert.deepEqual(
    logs.map((l) => item(l, m, 'executor:app:app-1/0').command?.command),
    ['wick.showStdout', 'wick.showStderr'],
  );
  const [done] = children(groups[2] as Node, m);
  assert.equal(item(done as Node, m).description, 'FINISHED · 1 core · 1m 0s · app-0');
});

test('an app whose executors keep failing says why in its description and quotes it in its tooltip', () => {
  const failure = {
    execId: 7,
    workerHostPort: '10.0.0.11:4000',
    time: 4_000,
    message:
      'Command exited with code 1\nThe end of its stderr:\nFailed to connect to wick://127.0.0.1:4242: connection refused — is wick.driver.host reachable from the worker hosts?',
  };
  const m = model({
    activeApps: [
      app('app-1', 'RUNNING', { executors: [exec] }),
      app('app-3', 'WAITING', { lastExecutorFailure: failure }),
    ] as MasterState['activeApps'],
  });
  const groups = roots('applications', m);
  const [failing] = children(groups[1] as Node, m);
  const it = item(failing as Node, m);
  assert.match(
    it.description ?? '',
    /executors failing: Failed to connect to wick:\/\/127\.0\.0\.1:4242: connection refused — is wick\.driver\.host reachable/,
  );
  assert.match(
    String(it.tooltip),
    /Last executor failure \(executor 7 on 10\.0\.0\.11:4000\):\nCommand exited with code 1\nThe end of its stderr:\nFailed/,
  );
});

test("a FAILED app's tooltip says what its driver said and the user's line", () => {
  const m = model({
    completedApps: [
      app('app-4', 'FAILED', {
        endTime: 9_000,
        failure: {
          message: 'JobFailedError: Job aborted due to stage failure: Error: no embers here',
          location: { file: '/home/me/job.ts', line: 14, column: 15 },
        },
      }),
    ] as MasterState['completedApps'],
  });
  const failedApp = roots('applications', m)
    .flatMap((g) => children(g, m))
    .find((n) => n.kind === 'app' && n.app.id === 'app-4');
  const it = item(failedApp as Node, m);
  assert.match(it.description ?? '', /^FAILED/);
  assert.match(
    String(it.tooltip),
    /Failed: JobFailedError: Job aborted due to stage failure: Error: no embers here\nat \/home\/me\/job\.ts:14:15/,
  );
});

test('ids are stable across pushes, so expansion and selection survive refreshes', () => {
  const a = model();
  const b = model({ seq: 8 });
  const ids = (m: Model) => {
    const out: string[] = [];
    const walk = (n: Node, parent = '') => {
      const it = item(n, m, parent);
      out.push(it.id);
      for (const c of children(n, m)) walk(c, it.id);
    };
    for (const r of [...roots('cluster', m), ...roots('applications', m)]) walk(r);
    return out;
  };
  assert.deepEqual(ids(a), ids(b));
  assert.equal(new Set(ids(a)).size, ids(a).length, 'ids are unique');
});

test('a group that fills gets a new id, so VS Code opens it instead of keeping it shut', () => {
  const empty = model({ activeApps: [] });
  const full = model();
  const running = (m: Model) => item(roots('applications', m)[0] as Node, m);
  assert.equal(running(empty).collapsible, 'none');
  assert.equal(running(full).collapsible, 'expanded');
  assert.notEqual(running(empty).id, running(full).id);
  // While it has apps the id stays, so a user who closed it finds it closed after each push.
  const two = model({
    seq: 8,
    activeApps: [app('app-1', 'RUNNING'), app('app-3', 'RUNNING')] as MasterState['activeApps'],
  });
  assert.equal(running(two).description, '2');
  assert.equal(running(two).id, running(full).id);
});

test('findApp locates an app and its group for reveal', () => {
  const m = model();
  const f = findApp('app-0', m);
  assert.equal(f?.parent.kind === 'group' && f.parent.group, 'completed');
});

test("an app's executors that ended as it meant wear no failure icon; others do", () => {
  const ended = (state: string, exitStatus?: number) => ({
    ...exec,
    state,
    ...(exitStatus !== undefined ? { exitStatus } : {}),
  });
  const icons = (appState: string, execState: string) => {
    const a = app('app-9', appState, { removedExecutors: [ended(execState)] });
    const m = model({ activeApps: [], completedApps: [a] as never });
    const [e] = children({ kind: 'app', app: a } as Node, m);
    return item(e as Node, m).icon;
  };
  assert.deepEqual(icons('FINISHED', 'EXITED'), { id: 'pass' });
  assert.deepEqual(icons('FINISHED', 'KILLED'), { id: 'pass' }, "killed by the app's stop");
  assert.deepEqual(icons('KILLED', 'KILLED'), { id: 'circle-slash' }, 'killed with its app');
  assert.equal(icons('FINISHED', 'FAILED')?.id, 'error');
  assert.equal(icons('FINISHED', 'LOST')?.id, 'warning');
  assert.equal(icons('RUNNING', 'KILLED')?.id, 'circle-slash', 'killed while its app runs');
  assert.equal(icons('FAILED', 'EXITED')?.id, 'circle-outline');
});

test("a driver shows its app's name and source file when this window submitted it", () => {
  const driver = {
    id: 'driver-20261203-0001',
    state: 'RUNNING',
    appPath: 'pi.ts',
    cores: 1,
    mem: 1024,
    supervise: false,
    submitDate: 0,
    workerId: 'worker-a',
    workerHostPort: '127.0.0.1:4000',
  };
  const m = model({ activeDrivers: [driver] as never });
  const node = { kind: 'driver', driver, under: 'drivers' } as Node;
  assert.equal(item(node, m).label, 'pi.ts');
  assert.equal(item(node, m).description, 'RUNNING · 1 core · driver-20261203-0001');
  rememberDriver('app-1', driver.id);
  assert.equal(item(node, m).label, 'Wick Pi · pi.ts');
  assert.match(
    item(node, m).tooltip ?? '',
    /^Driver driver-20261203-0001 of Wick Pi \(app-1\)\nSource: pi\.ts/,
  );
});

test('the Applications view leaves out filtered states and cleared completed apps and drivers', () => {
  const d = (id: string, state: string) => ({
    id,
    state,
    appPath: 'pi.ts',
    cores: 1,
    mem: 1024,
    supervise: false,
    submitDate: 0,
  });
  const base = model({
    completedApps: [app('app-0', 'FINISHED'), app('app-3', 'KILLED')] as never,
    completedDrivers: [d('driver-0', 'FINISHED')] as never,
    activeDrivers: [d('driver-1', 'RUNNING')] as never,
  });
  const labels = (m: Model) =>
    roots('applications', m).map((g) => {
      const it = item(g, m);
      const kids = children(g, m).map((k) =>
        k.kind === 'app' ? k.app.id : k.kind === 'driver' ? k.driver.id : '',
      );
      return `${it.label} ${it.description}: ${kids.join(',')}`;
    });
  assert.deepEqual(labels({ ...base, filter: { states: ['RUNNING', 'KILLED'] } }), [
    'Running 1: app-1',
    'Waiting 0: ',
    'Completed 1: app-3',
    'Drivers 2: driver-1,driver-0',
  ]);
  assert.deepEqual(
    labels({ ...base, filter: { cleared: new Set(['app-0', 'app-3', 'driver-0']) } }),
    ['Running 1: app-1', 'Waiting 1: app-2', 'Completed 0: ', 'Drivers 1: driver-1'],
  );
});
