/**
 * Applications against a real master: registration, executors placed on mock workers as
 * scheduling says, executor state forwarded to the application, retries, and the ways an
 * application ends (unregister, kill, disconnect, too many failures).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RequestExecutors } from '../../backend/protocol/app.js';
import { RequestKillApplication } from '../../backend/protocol/client.js';
import { startMaster } from '../helpers/cluster.js';
import { checkNothingLeftRunning } from '../helpers/leaks.js';
import {
  appDescription,
  appIn,
  connectClient,
  MockApp,
  MockWorker,
  workerIn,
} from '../helpers/masterMocks.js';

checkNothingLeftRunning();

const APP_ID = /^app-\d{14}-(\d{4})$/;

async function workers(t: Parameters<typeof MockWorker.start>[0], url: string, n: number) {
  const list: MockWorker[] = [];
  for (let i = 0; i < n; i++) {
    const w = await MockWorker.start(t, url, { cores: 4, memory: 2048 });
    assert.equal((await w.registerAndWait()).type, 'RegisteredWorker');
    list.push(w);
  }
  return list;
}

test('RegisterApplication → RegisteredApplication with ids app-yyyyMMddHHmmss-NNNN, numbered in order', {
  timeout: 60_000,
}, async (t) => {
  const master = await startMaster(t);
  const client = await connectClient(t, master.url);
  const a = await MockApp.start(t, master.url);
  const b = await MockApp.start(t, master.url);
  const idA = await a.register(appDescription({ name: 'first' }));
  const idB = await b.register(appDescription({ name: 'second' }));
  assert.equal(APP_ID.exec(idA)?.[1], '0000');
  assert.equal(APP_ID.exec(idB)?.[1], '0001');
  const reply = a.endpoint.all('RegisteredApplication')[0];
  assert.deepEqual(reply?.master, { address: master.address, name: 'Master' });
  const s = await client.waitFor((s) => s.activeApps.length === 2);
  assert.deepEqual(
    s.activeApps.map((x) => [x.id, x.name, x.state, x.waitingReason]),
    [
      [idA, 'first', 'WAITING', 'no worker is alive'],
      [idB, 'second', 'WAITING', 'no worker is alive'],
    ],
  );
});

test('executors spread over workers: LaunchExecutor to each, ExecutorAdded to the app, state forwarded', {
  timeout: 60_000,
}, async (t) => {
  const master = await startMaster(t);
  const client = await connectClient(t, master.url);
  const [w1, w2] = (await workers(t, master.url, 2)) as [MockWorker, MockWorker];
  const app = await MockApp.start(t, master.url);
  const desc = appDescription({ maxCores: 4, coresPerExecutor: 2, memoryPerExecutorMB: 512 });
  const appId = await app.register(desc);
  const l1 = await w1.endpoint.next('LaunchExecutor');
  const l2 = await w2.endpoint.next('LaunchExecutor');
  for (const l of [l1, l2]) {
    assert.equal(l.appId, appId);
    assert.equal(l.cores, 2);
    assert.equal(l.memory, 512);
    assert.equal(l.masterUrl, master.url);
    assert.deepEqual(l.appDesc, desc);
  }
  assert.deepEqual([l1.execId, l2.execId].sort(), [0, 1]);
  const added = await app.endpoint.count('ExecutorAdded', 2);
  const byWorker = new Map(added.map((m) => [m.workerId, m]));
  assert.equal(byWorker.get(w1.id)?.id, l1.execId);
  assert.equal(byWorker.get(w2.id)?.hostPort, `127.0.0.1:${w2.port}`);
  assert.equal(byWorker.get(w1.id)?.cores, 2);
  let s = await client.waitFor((s) => appIn(s, appId)?.coresGranted === 4);
  assert.equal(appIn(s, appId)?.state, 'RUNNING');
  assert.equal(workerIn(s, w1.id)?.coresUsed, 2);
  assert.equal(workerIn(s, w1.id)?.memoryUsed, 512);

  w1.executorStateChanged(appId, l1.execId as number, 'RUNNING');
  const up = await app.endpoint.next('ExecutorUpdated');
  assert.deepEqual(
    { id: up.id, state: up.state, workerLost: up.workerLost },
    { id: l1.execId, state: 'RUNNING', workerLost: false },
  );

  // A finished executor frees its cores and memory: the worker gets a new one at once.
  const mark = w1.endpoint.mark;
  w1.executorStateChanged(appId, l1.execId as number, 'EXITED', 0, 'Command exited with code 0');
  const exited = await app.endpoint.next('ExecutorUpdated', (m) => m.state === 'EXITED');
  assert.equal(exited.exitStatus, 0);
  assert.equal(exited.message, 'Command exited with code 0');
  const relaunch = await w1.endpoint.next('LaunchExecutor', undefined, mark);
  assert.equal(relaunch.execId, 2);
  s = await client.waitFor((s) => appIn(s, appId)?.executors.some((e) => e.id === 2) === true);
  assert.deepEqual(
    appIn(s, appId)?.removedExecutors.map((e) => [e.id, e.state, e.exitStatus]),
    [[l1.execId, 'EXITED', 0]],
  );
  assert.equal(workerIn(s, w1.id)?.coresUsed, 2);
});

test('an executor that fails by itself: its first line stays on it, the quote goes to the app with the hint', async (t) => {
  const master = await startMaster(t);
  const client = await connectClient(t, master.url);
  const [w] = (await workers(t, master.url, 1)) as [MockWorker];
  const app = await MockApp.start(t, master.url);
  const appId = await app.register(appDescription({ maxCores: 1 }));
  const launch = await w.endpoint.next('LaunchExecutor');
  const message = [
    'Command exited with code 1',
    'The end of its stderr:',
    'ERROR CoarseGrainedExecutorBackend: Cannot register with driver: wick://127.0.0.1:4242/CoarseGrainedScheduler: Failed to connect to wick://127.0.0.1:4242: connection refused',
  ].join('\n');
  w.executorStateChanged(appId, launch.execId as number, 'EXITED', 1, message);
  const updated = await app.endpoint.next('ExecutorUpdated', (m) => m.state === 'EXITED');
  assert.equal(updated.message, message, 'the driver gets the whole quote');
  const s = await client.waitFor((s) => appIn(s, appId)?.lastExecutorFailure !== undefined);
  const a = appIn(s, appId);
  assert.equal(a?.removedExecutors[0]?.message, 'Command exited with code 1');
  assert.equal(a?.lastExecutorFailure?.execId, launch.execId);
  assert.equal(a?.lastExecutorFailure?.workerHostPort, `127.0.0.1:${w.port}`);
  assert.match(
    a?.lastExecutorFailure?.message ?? '',
    /connection refused — is wick\.driver\.host reachable from the worker hosts\?$/,
  );
});

test('with spreadOut=false one worker is filled first; without cores per executor one executor takes all it can', {
  timeout: 60_000,
}, async (t) => {
  const master = await startMaster(t, { conf: { 'wick.deploy.spreadOut': false } });
  const client = await connectClient(t, master.url);
  await workers(t, master.url, 2);
  const packed = await MockApp.start(t, master.url);
  const packedId = await packed.register(
    appDescription({ maxCores: 4, coresPerExecutor: 2, memoryPerExecutorMB: 256 }),
  );
  const two = await packed.endpoint.count('ExecutorAdded', 2);
  assert.equal(two[0]?.workerId, two[1]?.workerId, 'both executors on one worker');
  const whole = await MockApp.start(t, master.url);
  const wholeId = await whole.register(appDescription({ memoryPerExecutorMB: 256 }));
  const one = await whole.endpoint.next('ExecutorAdded');
  assert.equal(one.cores, 4, 'the other worker, all of its cores');
  assert.notEqual(one.workerId, two[0]?.workerId);
  const s = await client.waitFor((s) => appIn(s, wholeId)?.coresGranted === 4);
  assert.equal(appIn(s, packedId)?.coresGranted, 4);
  assert.ok(s.workers.every((w) => w.coresUsed === 4));
});

test('maxExecutorRetries failures in a row with none registered → FAILED; never while one registered', {
  timeout: 60_000,
}, async (t) => {
  const master = await startMaster(t, { conf: { 'wick.deploy.maxExecutorRetries': 3 } });
  const client = await connectClient(t, master.url);
  const good = await MockWorker.start(t, master.url, { cores: 1, memory: 1024 });
  assert.equal((await good.registerAndWait()).type, 'RegisteredWorker');
  const app = await MockApp.start(t, master.url);
  const appId = await app.register(appDescription({ maxCores: 2, memoryPerExecutorMB: 256 }));
  const first = await good.endpoint.next('LaunchExecutor');
  good.executorStateChanged(appId, first.execId as number, 'RUNNING');
  app.executorRegistered(first.execId as number);
  await app.barrier();

  // A worker where every executor fails at once, five times (more than the three allowed).
  const bad = await MockWorker.start(t, master.url, { cores: 1, memory: 1024 });
  let failures = 0;
  bad.endpoint.onMessage = (m) => {
    if (m.type !== 'LaunchExecutor' || failures >= 5) return;
    failures++;
    bad.executorStateChanged(m.appId as string, m.execId as number, 'FAILED', 1, 'boom');
  };
  assert.equal((await bad.registerAndWait()).type, 'RegisteredWorker');
  await bad.endpoint.count('LaunchExecutor', 6);
  await bad.barrier();
  let s = await client.state();
  assert.equal(appIn(s, appId)?.state, 'RUNNING', 'one executor registered: the app goes on');
  assert.equal(app.endpoint.all('ApplicationRemoved').length, 0);
  await master.waitForStderr(/executor failure 5 in a row of application/);

  // Now the registered one fails too: none is registered and the failures are past the limit.
  good.executorStateChanged(appId, first.execId as number, 'FAILED', 1);
  const removed = await app.endpoint.next('ApplicationRemoved');
  assert.match(
    removed.message as string,
    /^FAILED: 6 executor failures in a row with none registered with the driver \(wick\.deploy\.maxExecutorRetries = 3\); the last, executor \d+ on 127\.0\.0\.1:\d+: FAILED$/,
  );
  s = await client.waitFor((s) => s.completedApps.some((a) => a.id === appId));
  assert.equal(appIn(s, appId)?.state, 'FAILED');
  assert.deepEqual(s.activeApps, []);
  await master.waitForStderr(
    new RegExp(`Application mock-app with ID ${appId} failed: 6 executor failures`),
  );
  // Its executor on the bad worker (left launching) is killed, and the workers told it ended.
  await bad.endpoint.next('KillExecutor', (m) => m.appId === appId);
  await good.endpoint.next('ApplicationFinished', (m) => m.id === appId);
});

test('RUNNING does not reset the count; an exit 0 before registering is a failure; the last failure is quoted', {
  timeout: 60_000,
}, async (t) => {
  const master = await startMaster(t, { conf: { 'wick.deploy.maxExecutorRetries': 3 } });
  const [w] = (await workers(t, master.url, 1)) as [MockWorker];
  const app = await MockApp.start(t, master.url);
  const appId = await app.register(appDescription({ maxCores: 1, memoryPerExecutorMB: 256 }));
  const ends: [number, string][] = [
    [1, 'Command exited with code 1'],
    [0, 'Command exited with code 0'],
    [1, 'Command exited with code 1\nThe end of its stderr:\nError: cannot authenticate'],
  ];
  let mark = 0;
  for (const [code, message] of ends) {
    const l = await w.endpoint.next('LaunchExecutor', (m) => m.appId === appId, mark);
    mark = w.endpoint.mark;
    w.executorStateChanged(appId, l.execId as number, 'RUNNING');
    w.executorStateChanged(appId, l.execId as number, 'EXITED', code, message);
  }
  const removed = await app.endpoint.next('ApplicationRemoved');
  assert.match(
    removed.message as string,
    /^FAILED: 3 executor failures in a row .*; the last, executor 2 on 127\.0\.0\.1:\d+: Command exited with code 1\nThe end of its stderr:\nError: cannot authenticate$/,
  );
  await master.waitForStderr(
    /Executor app-\S+\/1 ended before registering with its driver: executor failure 2 in a row/,
  );
});

test('ExecutorRegistered resets the count, and only from the application’s own driver', {
  timeout: 60_000,
}, async (t) => {
  const master = await startMaster(t, { conf: { 'wick.deploy.maxExecutorRetries': 2 } });
  const client = await connectClient(t, master.url);
  const [w] = (await workers(t, master.url, 1)) as [MockWorker];
  const app = await MockApp.start(t, master.url);
  const appId = await app.register(appDescription({ maxCores: 1, memoryPerExecutorMB: 256 }));
  const other = await MockApp.start(t, master.url);
  let mark = 0;
  const launched = async () => {
    const l = await w.endpoint.next('LaunchExecutor', (m) => m.appId === appId, mark);
    mark = w.endpoint.mark;
    return l;
  };
  const first = await launched();
  w.executorStateChanged(appId, first.execId as number, 'EXITED', 1, 'Command exited with code 1');
  // Registered, then failed: one failure in a row again, not two.
  const l = await launched();
  w.executorStateChanged(appId, l.execId as number, 'RUNNING');
  await w.barrier();
  app.executorRegistered(l.execId as number);
  await app.barrier();
  await master.waitForStderr(
    /registered with its driver: the 1 executor failure\(s\) in a row before it no longer count/,
  );
  w.executorStateChanged(appId, l.execId as number, 'EXITED', 1, 'Command exited with code 1');
  // Another peer's word for the next executor is not the driver's: ignored, and said so.
  const next = await launched();
  w.executorStateChanged(appId, next.execId as number, 'RUNNING');
  await w.barrier();
  other.executorRegistered(next.execId as number);
  await master.waitForStderr(
    new RegExp(
      `Ignoring ExecutorRegistered for executor ${next.execId} from \\S+: not the driver of an application`,
    ),
  );
  w.executorStateChanged(appId, next.execId as number, 'EXITED', 1, 'Command exited with code 1');
  assert.match(
    (await app.endpoint.next('ApplicationRemoved')).message as string,
    /^FAILED: 2 executor failures in a row/,
  );
  const s = await client.waitFor((s) => appIn(s, appId)?.state === 'FAILED');
  // Three failures, but never two in a row before the last: the one that registered reset it.
  assert.equal(appIn(s, appId)?.removedExecutors.length, 3);
});

test('failures that alternate between two workers count in one row: FAILED, though one always runs', {
  timeout: 60_000,
}, async (t) => {
  const master = await startMaster(t, { conf: { 'wick.deploy.maxExecutorRetries': 4 } });
  // One core each: a replacement goes to the worker whose executor just failed.
  const one = async () => {
    const w = await MockWorker.start(t, master.url, { cores: 1, memory: 1024 });
    assert.equal((await w.registerAndWait()).type, 'RegisteredWorker');
    return w;
  };
  const w1 = await one();
  const w2 = await one();
  const app = await MockApp.start(t, master.url);
  const appId = await app.register(
    appDescription({ maxCores: 2, coresPerExecutor: 1, memoryPerExecutorMB: 256 }),
  );
  // One executor on each; each worker's executor fails only once the other's is RUNNING again.
  const on = new Map<MockWorker, number>();
  for (const w of [w1, w2]) {
    const l = await w.endpoint.next('LaunchExecutor');
    on.set(w, l.execId as number);
    w.executorStateChanged(appId, l.execId as number, 'RUNNING');
  }
  for (let i = 0; i < 4; i++) {
    const w = i % 2 === 0 ? w1 : w2;
    const mark = w.endpoint.mark;
    w.executorStateChanged(
      appId,
      on.get(w) as number,
      'EXITED',
      1,
      `Command exited with code ${i + 1}`,
    );
    if (i === 3) break;
    const l = await w.endpoint.next('LaunchExecutor', (m) => m.appId === appId, mark);
    on.set(w, l.execId as number);
    w.executorStateChanged(appId, l.execId as number, 'RUNNING');
  }
  const removed = await app.endpoint.next('ApplicationRemoved');
  assert.match(
    removed.message as string,
    /^FAILED: 4 executor failures in a row .*: Command exited with code 4$/,
  );
  await w1.endpoint.next('KillExecutor', (m) => m.appId === appId);
});

/** A master, a client of its state, one worker, and an application with its executor launched. */
async function oneAppOnOneWorker(t: Parameters<typeof MockWorker.start>[0]) {
  const master = await startMaster(t);
  const client = await connectClient(t, master.url);
  const [w] = (await workers(t, master.url, 1)) as [MockWorker];
  const app = await MockApp.start(t, master.url);
  const appId = await app.register(appDescription({ memoryPerExecutorMB: 256 }));
  const launch = await w.endpoint.next('LaunchExecutor');
  return { master, client, w, app, appId, launch };
}

test('UnregisterApplication → FINISHED; its executors killed and resources freed', {
  timeout: 60_000,
}, async (t) => {
  const { client, w, app, appId, launch } = await oneAppOnOneWorker(t);
  app.unregister();
  const kill = await w.endpoint.next('KillExecutor');
  assert.deepEqual([kill.appId, kill.execId], [appId, launch.execId]);
  await w.endpoint.next('ApplicationFinished', (m) => m.id === appId);
  const s = await client.waitFor((s) => appIn(s, appId)?.state === 'FINISHED');
  assert.deepEqual(
    s.completedApps.map((a) => a.id),
    [appId],
  );
  assert.equal(workerIn(s, w.id)?.coresUsed, 0);
  assert.equal(workerIn(s, w.id)?.memoryUsed, 0);
  assert.ok(appIn(s, appId)?.endTime !== undefined);
  assert.equal(app.endpoint.all('ApplicationRemoved').length, 0, 'a finished app is not told');
});

test('after UnregisterApplication, how each executor really ended replaces the KILLED presumed, without a warning', {
  timeout: 60_000,
}, async (t) => {
  const { master, client, w, app, appId, launch } = await oneAppOnOneWorker(t);
  const execId = launch.execId as number;
  w.executorStateChanged(appId, execId, 'RUNNING');
  await client.waitFor((s) => appIn(s, appId)?.executors[0]?.state === 'RUNNING');
  // A clean stop: the executor exits on the driver's StopExecutor as the app unregisters.
  app.unregister();
  await w.endpoint.next('KillExecutor');
  const finished = await client.waitFor((s) => appIn(s, appId)?.state === 'FINISHED');
  assert.equal(appIn(finished, appId)?.removedExecutors[0]?.state, 'KILLED');
  const mark = master.stderr.length;
  w.executorStateChanged(appId, execId, 'EXITED', 0, 'Command exited with code 0');
  const s = await client.waitFor((s) => appIn(s, appId)?.removedExecutors[0]?.state === 'EXITED');
  assert.equal(appIn(s, appId)?.removedExecutors[0]?.exitStatus, 0);
  await master.waitForStderr(
    /of the finished application ended EXITED: Command exited with code 0/,
    mark,
  );
  // A second report of an executor nobody knows still warns: the first was not taken for one.
  w.executorStateChanged(appId, 99, 'EXITED', 0);
  await master.waitForStderr(/Got status update for unknown executor app-\d+-\d+\/99/, mark);
  assert.doesNotMatch(
    master.stderr.slice(mark),
    new RegExp(`unknown executor ${appId}/${execId}\\b`),
  );
  assert.equal(workerIn(s, w.id)?.coresUsed, 0, 'no resources taken back twice');
});

test("a killed application's executors stay KILLED though they exit 0 (their driver stopped them as the kill came)", {
  timeout: 60_000,
}, async (t) => {
  const { master, client, w, app, appId, launch } = await oneAppOnOneWorker(t);
  const execId = launch.execId as number;
  w.executorStateChanged(appId, execId, 'RUNNING');
  await client.waitFor((s) => appIn(s, appId)?.executors[0]?.state === 'RUNNING');
  assert.equal((await client.master.ask(RequestKillApplication({ appId }))).success, true);
  await app.endpoint.next('ApplicationRemoved');
  await w.endpoint.next('KillExecutor');
  const mark = master.stderr.length;
  w.executorStateChanged(appId, execId, 'EXITED', 0, 'Command exited with code 0');
  const s = await client.waitFor(
    (s) => appIn(s, appId)?.removedExecutors[0]?.message !== undefined,
  );
  const exec = appIn(s, appId)?.removedExecutors[0];
  assert.equal(appIn(s, appId)?.state, 'KILLED');
  assert.equal(exec?.state, 'KILLED', JSON.stringify(exec));
  assert.equal(exec?.exitStatus, undefined, 'no "exit 0" on a killed executor');
  assert.equal(exec?.message, `Killed with application ${appId}`);
  await master.waitForStderr(/of the finished application ended EXITED/, mark);
});

test('RequestKillApplication kills an application and says so; an unknown one is refused', {
  timeout: 60_000,
}, async (t) => {
  const master = await startMaster(t);
  const client = await connectClient(t, master.url);
  await workers(t, master.url, 1);
  const app = await MockApp.start(t, master.url);
  const appId = await app.register();
  await app.endpoint.next('ExecutorAdded');
  const ok = await client.master.ask(RequestKillApplication({ appId }));
  assert.equal(ok.success, true);
  assert.equal(ok.appId, appId);
  assert.equal((await app.endpoint.next('ApplicationRemoved')).message, 'KILLED');
  const s = await client.waitFor((s) => appIn(s, appId)?.state === 'KILLED');
  assert.ok(s.workers.every((w) => w.coresUsed === 0));
  const again = await client.master.ask(RequestKillApplication({ appId }));
  assert.equal(again.success, false);
  assert.match(again.message, /already finished or does not exist/);
});

test('an application whose client disconnects without unregistering is FAILED, and says so', {
  timeout: 60_000,
}, async (t) => {
  const master = await startMaster(t);
  const client = await connectClient(t, master.url);
  const [w] = (await workers(t, master.url, 1)) as [MockWorker];
  const app = await MockApp.start(t, master.url);
  const appId = await app.register();
  await w.endpoint.next('LaunchExecutor');
  await app.stop();
  await w.endpoint.next('KillExecutor', (m) => m.appId === appId);
  const s = await client.waitFor((s) => appIn(s, appId)?.state === 'FAILED');
  assert.deepEqual(s.activeApps, []);
  assert.equal(workerIn(s, w.id)?.coresUsed, 0);
  assert.match(
    appIn(s, appId)?.failure?.message ?? '',
    new RegExp(`The driver of ${appId} went away without unregistering its application`),
  );
});

test('UnregisterApplication with a failure → FAILED, the failure kept as the driver sent it', {
  timeout: 60_000,
}, async (t) => {
  const master = await startMaster(t);
  const client = await connectClient(t, master.url);
  const [w] = (await workers(t, master.url, 1)) as [MockWorker];
  const app = await MockApp.start(t, master.url);
  const appId = await app.register();
  await w.endpoint.next('LaunchExecutor');
  const failure = {
    message: 'Error: bad value 3',
    stack: 'Error: bad value 3\n    at /home/u/throws.ts:7:11',
    location: { file: '/home/u/throws.ts', line: 7, column: 11 },
  };
  app.unregister(failure);
  await w.endpoint.next('KillExecutor', (m) => m.appId === appId);
  const s = await client.waitFor((s) => appIn(s, appId)?.state === 'FAILED');
  assert.deepEqual(appIn(s, appId)?.failure, failure);
  assert.equal(workerIn(s, w.id)?.coresUsed, 0);
  // A clean unregister carries no failure.
  const ok = await MockApp.start(t, master.url);
  const okId = await ok.register();
  ok.unregister();
  const s2 = await client.waitFor((s) => appIn(s, okId)?.state === 'FINISHED');
  assert.equal(appIn(s2, okId)?.failure, undefined);
});

test('completed applications are retained up to wick.deploy.retainedApplications', {
  timeout: 60_000,
}, async (t) => {
  const master = await startMaster(t, { conf: { 'wick.deploy.retainedApplications': 2 } });
  const client = await connectClient(t, master.url);
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    const app = await MockApp.start(t, master.url);
    const id = await app.register(appDescription({ name: `app${i}` }));
    ids.push(id);
    app.unregister();
    await client.waitFor((s) => appIn(s, id)?.state === 'FINISHED');
  }
  const s = await client.waitFor((s) => appIn(s, ids[0] as string) === undefined);
  assert.deepEqual(
    s.completedApps.map((a) => a.id),
    ids.slice(1),
  );
  assert.deepEqual(await client.state(), s);
});

test('an application asking more memory than any worker has stays WAITING and says why', {
  timeout: 60_000,
}, async (t) => {
  const master = await startMaster(t);
  const client = await connectClient(t, master.url);
  const [w] = (await workers(t, master.url, 1)) as [MockWorker];
  const app = await MockApp.start(t, master.url);
  const appId = await app.register(appDescription({ memoryPerExecutorMB: 100_000 }));
  const s = await client.waitFor((s) => appIn(s, appId)?.waitingReason !== undefined);
  const a = appIn(s, appId);
  assert.equal(a?.state, 'WAITING');
  assert.match(a?.waitingReason ?? '', /100000 MiB/);
  assert.match(a?.waitingReason ?? '', /largest worker has 2048 MiB/);
  await w.barrier();
  assert.equal(w.endpoint.all('LaunchExecutor').length, 0);
  assert.equal(app.endpoint.all('ExecutorAdded').length, 0);
});

test('RequestExecutors caps the executors: none replaces one that ends; only the app’s own driver may ask', {
  timeout: 60_000,
}, async (t) => {
  const master = await startMaster(t);
  const [w] = (await workers(t, master.url, 1)) as [MockWorker];
  const app = await MockApp.start(t, master.url);
  const appId = await app.register(
    appDescription({ memoryPerExecutorMB: 256, coresPerExecutor: 1, maxCores: 2 }),
  );
  const launched = [
    await w.endpoint.next('LaunchExecutor'),
    await w.endpoint.next('LaunchExecutor'),
  ];
  for (const l of launched) w.executorStateChanged(appId, l.execId as number, 'RUNNING');

  // Another peer's request for the app is not the app's: refused, and said so.
  const other = await MockApp.start(t, master.url);
  other.master.send(RequestExecutors({ appId, requestedTotal: 5 }));
  await master.waitForStderr(
    new RegExp(
      `Refused RequestExecutors of ${appId} from \\S+ .*only the driver of ${appId} may send it`,
    ),
  );

  app.master.send(RequestExecutors({ appId, requestedTotal: 0 }));
  await master.waitForStderr(new RegExp(`Application ${appId} requests 0 executors in all`));
  const mark = w.endpoint.mark;
  w.executorStateChanged(appId, launched[0]?.execId as number, 'EXITED', 0);
  // The master handled the exit, and what it sent the worker before its reply has arrived.
  await w.barrier();
  await master.waitForStderr(
    new RegExp(`Removing executor ${appId}/${launched[0]?.execId} because it is EXITED`),
  );
  assert.equal(
    w.endpoint.all('LaunchExecutor', mark).length,
    0,
    'no executor replaced the one that ended',
  );
  // The app asks again for two: the one it lost is replaced now, and not before.
  app.master.send(RequestExecutors({ appId, requestedTotal: 2 }));
  const again = await w.endpoint.next('LaunchExecutor', undefined, mark);
  assert.equal(again.appId, appId);
});
