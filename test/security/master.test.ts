/**
 * Hostile peers against a real master (issue 17, finding 3; docs/protocol.md, "Who may do what"):
 * a peer that is not the worker or the driver a message is about sends `ExecutorStateChanged`
 * dropping another application's executor, `UnregisterApplication` of another application (with
 * or without a failure report),
 * `DriverStateChanged` of a running driver, `Heartbeat`s for a worker that stopped, and
 * `RegisterWorker` of a worker that does not exist. Once with the cluster running open, once
 * authenticating (the default); each is refused, logged once per connection, and changes
 * nothing: the executor stays listed and running, the applications RUNNING, the driver RUNNING,
 * the stopped worker goes DEAD on time, and both applications end with the exact answer.
 *
 * In an open cluster anyone may be a worker (that is what running open means): a stranger's
 * RegisterWorker is accepted there, and the test says so, and that the master forgets the fake
 * worker when it hangs up.
 *
 * Why test/security/ mirrors no one source file: see worker.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, type TestContext, test } from 'node:test';
import { UnregisterApplication } from '../../backend/protocol/app.js';
import { RequestKillApplication } from '../../backend/protocol/client.js';
import {
  DriverStateChanged,
  ExecutorStateChanged,
  Heartbeat,
  RegisterWorker,
  WorkerLatestState,
} from '../../backend/protocol/deploy.js';
import { RequestMasterState } from '../../backend/protocol/state.js';
import {
  AppDir,
  appIdIn,
  type MasterState,
  type SharedCluster,
  startSharedCluster,
} from '../helpers/apps.js';
import { markedProcesses, startWick, type WickProcess } from '../helpers/cli.js';
import { startWorker } from '../helpers/cluster.js';
import { assertExactAnswer, GatedApp } from '../helpers/gatedApp.js';
import {
  type AppCredential,
  assertNotPermitted,
  clusterSecret,
  confArgs,
  credentialOf,
  daemonLog,
  type Guise,
  guiseText,
  HostilePeer,
  MODES,
  type Mode,
  refusedAtHandshake,
  refusedOnce,
} from '../helpers/hostile.js';
import { isAlive, waitFor } from '../helpers/processes.js';

const apps = new AppDir();
after(() => apps.remove());

for (const mode of MODES) describe(`the master, ${mode.name}`, () => masterSuite(mode));

interface Running {
  appId: string;
  execId: number;
  /** The executor's process. */
  pid: number;
  credential: AppCredential | undefined;
}

function masterSuite(mode: Mode): void {
  const tag = mode.open ? 'open' : 'auth';
  // A short worker timeout, for the Heartbeat case: workers beat every second.
  const conf = {
    ...mode.conf,
    'wick.worker.executor.prestart': 'false',
    'wick.worker.timeout': '4s',
  };
  let cluster: SharedCluster;
  /** Runs in cluster mode: its driver is one the master launched. */
  const victim = new GatedApp(apps, `victim-${tag}`);
  /** Another application, whose key the hostile peer holds. */
  const other = new GatedApp(apps, `other-${tag}`);
  let victimSubmit: WickProcess;
  let otherSubmit: WickProcess;
  let driverId: string;
  let A: Running;
  let B: Running;

  const state = () => cluster.watch.waitFor(() => true);
  const appOf = (s: MasterState, id: string) => s.activeApps.find((a) => a.id === id);

  before(
    async () => {
      cluster = await startSharedCluster({ workers: 2, cores: 2, conf });
      const submit = (app: GatedApp, extra: string[]) =>
        startWick(
          [
            'submit',
            '--master',
            cluster.url,
            ...confArgs(mode.conf),
            ...[
              '--total-executor-cores',
              '1',
              '--executor-memory',
              '256m',
              '--driver-memory',
              '256m',
            ],
            ...extra,
            ...app.args,
          ],
          { mark: cluster.mark },
        );
      victimSubmit = submit(victim, ['--deploy-mode', 'cluster', '--wait']);
      otherSubmit = submit(other, []);
      const s = await cluster.watch.waitFor(
        (s) =>
          s.activeDrivers.some((d) => d.state === 'RUNNING') &&
          [victim.name, other.name].every((name) =>
            s.activeApps.some(
              (a) => a.name === name && a.executors.some((e) => e.state === 'RUNNING'),
            ),
          ),
      );
      driverId = (s.activeDrivers[0] as MasterState['activeDrivers'][0]).id;
      const running = async (name: string): Promise<Running> => {
        const app = s.activeApps.find((a) => a.name === name) as MasterState['activeApps'][0];
        const execId = (app.executors[0] as MasterState['activeApps'][0]['executors'][0]).id;
        // Registered with its driver and running a task.
        await waitFor(`a task of ${app.id} running`, () =>
          /Running task 0\.0/.test(cluster.executorOutput(app.id)),
        );
        const p = markedProcesses(cluster.mark).find(
          (p) => / executor /.test(p.cmdline) && p.cmdline.includes(`--app-id ${app.id}`),
        );
        assert.ok(p, `no executor process of ${app.id}`);
        return { appId: app.id, execId, pid: p.pid, credential: credentialOf(p.pid) };
      };
      A = await running(victim.name);
      B = await running(other.name);
      assert.equal(appIdIn(otherSubmit.stderr()), B.appId);
    },
    { timeout: 60_000 },
  );

  after(async () => {
    victim.open();
    other.open();
    await Promise.all([victimSubmit?.exited, otherSubmit?.exited]);
    await cluster?.stop();
  });

  /** Guises that complete the handshake: a stranger when open; else the secret and B's key. */
  function guises(): Guise[] {
    if (mode.open) return [{ kind: 'stranger' }];
    return [
      { kind: 'secret', secret: clusterSecret() },
      { kind: 'app', credential: B.credential as AppCredential },
    ];
  }

  async function strangersAtTheDoor(t: TestContext): Promise<void> {
    if (mode.open) return;
    assert.match(
      await refusedAtHandshake(t, cluster.master.address, { kind: 'stranger' }),
      /^Authentication required/,
    );
    assert.match(
      await refusedAtHandshake(t, cluster.master.address, { kind: 'guesser' }),
      /^Authentication failed/,
    );
  }

  /**
   * Refused and logged once. A worker's message is refused to an application's key at the door
   * (its ask answered -32030); anything else by the handler, whose ask RequestMasterState
   * follows in the master's inbox. WorkerLatestState of a real worker is the canary.
   */
  async function refused(
    peer: HostilePeer,
    message: { type: string; [k: string]: unknown },
    atDoor: boolean,
  ) {
    const s = await state();
    await refusedOnce({
      log: daemonLog(cluster.master),
      peer,
      to: 'Master',
      message,
      barrier: atDoor ? undefined : RequestMasterState({}),
      canary: {
        to: 'Master',
        message: WorkerLatestState({
          id: s.workers[0]?.id as string,
          executors: [],
          driverIds: [],
        }),
      },
    });
  }

  test('ExecutorStateChanged dropping another application’s executor: it stays listed and running', async (t) => {
    await strangersAtTheDoor(t);
    const forged = ExecutorStateChanged({
      appId: A.appId,
      execId: A.execId,
      state: 'EXITED',
      exitStatus: 0,
      message: 'forged',
    });
    for (const g of guises()) {
      const peer = await HostilePeer.connect(t, cluster.master.address, g);
      await refused(peer, forged, g.kind === 'app');
      const s = await state();
      assert.deepEqual(
        appOf(s, A.appId)?.executors.map((e) => [e.id, e.state]),
        [[A.execId, 'RUNNING']],
        guiseText(g),
      );
      assert.ok(isAlive(A.pid), `${guiseText(g)}: the executor's process died`);
      peer.close();
    }
  });

  test('UnregisterApplication of another application: it stays RUNNING', async (t) => {
    await strangersAtTheDoor(t);
    const forged = UnregisterApplication({ appId: A.appId });
    const all: Guise[] = mode.open
      ? guises()
      : [...guises(), { kind: 'app', credential: A.credential as AppCredential }];
    for (const g of all) {
      // Even A's own key counts only on the connection A's driver registered on; an application's
      // key plays no driver's role towards the master at all, so it is refused at the door.
      const peer = await HostilePeer.connect(t, cluster.master.address, g);
      await refused(peer, forged, g.kind === 'app');
      const s = await state();
      assert.equal(appOf(s, A.appId)?.state, 'RUNNING', guiseText(g));
      if (g.kind === 'app') {
        // Nor may an application's key kill: that is a client's (the cluster secret's).
        assertNotPermitted(
          await peer.ask('Master', RequestKillApplication({ appId: A.appId })),
          /^Not permitted: RequestKillApplication: it is sent by client/,
        );
      }
      peer.close();
    }
    assert.equal(appOf(await state(), A.appId)?.state, 'RUNNING');
  });

  test('UnregisterApplication with a failure, from a stranger: the application stays RUNNING, no failure', async (t) => {
    await strangersAtTheDoor(t);
    // The failure report (docs/protocol.md, "How an application fails") is heard only from the
    // application's own driver, over the connection it registered on: no one else can fail it.
    const forged = UnregisterApplication({
      appId: A.appId,
      failure: { message: 'Error: forged', location: { file: '/x.ts', line: 1, column: 1 } },
    });
    const all: Guise[] = mode.open
      ? guises()
      : [...guises(), { kind: 'app', credential: A.credential as AppCredential }];
    for (const g of all) {
      const peer = await HostilePeer.connect(t, cluster.master.address, g);
      await refused(peer, forged, g.kind === 'app');
      const app = appOf(await state(), A.appId);
      assert.equal(app?.state, 'RUNNING', guiseText(g));
      assert.equal(app?.failure, undefined, guiseText(g));
      peer.close();
    }
  });

  test('DriverStateChanged of a running driver: it stays RUNNING, its process alive', async (t) => {
    await strangersAtTheDoor(t);
    const forged = DriverStateChanged({ driverId, state: 'FINISHED' });
    const driverPid = () =>
      markedProcesses(cluster.mark).find((p) => p.cmdline.includes('driver-wrapper'))?.pid;
    const pid = driverPid();
    assert.ok(pid, 'no driver process');
    for (const g of guises()) {
      const peer = await HostilePeer.connect(t, cluster.master.address, g);
      await refused(peer, forged, g.kind === 'app');
      const s = await state();
      assert.deepEqual(
        s.activeDrivers.map((d) => [d.id, d.state]),
        [[driverId, 'RUNNING']],
        guiseText(g),
      );
      assert.ok(isAlive(pid), `${guiseText(g)}: the driver's process died`);
      peer.close();
    }
  });

  test('Heartbeats for a stopped worker from another connection do not keep it ALIVE: DEAD after the timeout', {
    timeout: 60_000,
  }, async (t) => {
    await strangersAtTheDoor(t);
    const stopped = await startWorker(t, cluster.url, {
      cores: 1,
      conf,
      env: { WICK_TEST_MARK: cluster.mark },
    });
    await cluster.watch.waitFor((s) =>
      s.workers.some((w) => w.id === stopped.workerId && w.state === 'ALIVE'),
    );
    const peers = await Promise.all(
      guises().map((g) => HostilePeer.connect(t, cluster.master.address, g)),
    );
    const forged = Heartbeat({
      workerId: stopped.workerId,
      worker: { address: stopped.address, name: 'Worker' },
    });
    // The forgers beat for it from before it stops until the master has given it up.
    let beating = true;
    const beats = (async () => {
      let sent = 0;
      while (beating) {
        await Promise.all(peers.map((p) => p.tell('Master', forged)));
        sent++;
        await new Promise((r) => setTimeout(r, 200));
      }
      return sent;
    })();
    // Its connection stays open: only the missing heartbeats can tell the master it is gone.
    stopped.signal('SIGSTOP');
    const dead = await cluster.watch.waitFor((s) =>
      s.workers.some((w) => w.id === stopped.workerId && w.state === 'DEAD'),
    );
    beating = false;
    assert.ok((await beats) > 1);
    assert.match(
      cluster.master.stderr,
      new RegExp(`Removing ${stopped.workerId} because we got no heartbeat in 4 seconds`),
    );
    // The other workers beat on.
    assert.deepEqual(
      dead.workers.filter((w) => w.id !== stopped.workerId).map((w) => w.state),
      ['ALIVE', 'ALIVE'],
    );
    for (const p of peers) await refused(p, forged, p.guise.kind === 'app');
    await stopped.kill('SIGKILL');
  });

  test('RegisterWorker of a worker that does not exist', async (t) => {
    await strangersAtTheDoor(t);
    const fake = (from: string) =>
      RegisterWorker({
        id: `worker-20261202000000-127.0.0.1-${tag === 'open' ? 1 : 2}`,
        host: '127.0.0.1',
        port: 1,
        worker: { address: from, name: 'Worker' },
        cores: 1,
        memory: 64,
        workerWebUiUrl: 'http://127.0.0.1:1',
        masterAddress: cluster.master.address,
      });
    if (!mode.open) {
      // Only the cluster secret registers workers (holding it is what being a worker means).
      const peer = await HostilePeer.connect(t, cluster.master.address, {
        kind: 'app',
        credential: B.credential as AppCredential,
      });
      const msg = fake(peer.from);
      await refused(peer, msg, true);
      assert.ok(!(await state()).workers.some((w) => w.id === msg.id));
      peer.close();
      return;
    }
    // An open cluster lets anyone join: the master takes the stranger for a worker and answers it
    // on its connection; it gets no executor (every application has the cores it asked for), and
    // it is forgotten once it hangs up.
    const peer = await HostilePeer.connect(t, cluster.master.address, { kind: 'stranger' });
    const msg = fake(peer.from);
    await peer.tell('Master', msg);
    const reply = await peer.raw.take((f) => f.method === 'RegisteredWorker');
    assert.equal((reply.params as { to?: string }).to, 'Worker');
    const joined = await cluster.watch.waitFor((s) => s.workers.some((w) => w.id === msg.id));
    assert.equal(joined.workers.find((w) => w.id === msg.id)?.state, 'ALIVE');
    peer.close();
    await cluster.watch.waitFor((s) => s.workers.find((w) => w.id === msg.id)?.state === 'DEAD');
    assert.deepEqual(
      peer.unasked.map((f) => f.method),
      [],
      'the fake worker was sent more than its registration',
    );
  });

  test('both applications end with the exact answer, their executors ended by themselves', {
    timeout: 60_000,
  }, async () => {
    victim.open();
    other.open();
    const [v, o] = await Promise.all([victimSubmit.exited, otherSubmit.exited]);
    assert.equal(o.code, 0, otherSubmit.stderr());
    assertExactAnswer(otherSubmit.stdout());
    assert.equal(v.code, 0, victimSubmit.stderr());
    assertExactAnswer(victimSubmit.stdout());
    const s = await cluster.watch.waitFor(
      (s) =>
        [A.appId, B.appId].every(
          (id) =>
            cluster.watch.app(s, id)?.state === 'FINISHED' &&
            cluster.watch.app(s, id)?.removedExecutors.every((e) => e.state === 'EXITED'),
        ) && cluster.watch.driver(s, driverId)?.state === 'FINISHED',
    );
    for (const id of [A.appId, B.appId]) {
      assert.deepEqual(
        cluster.watch.app(s, id)?.removedExecutors.map((e) => [e.state, e.exitStatus, e.message]),
        // As its worker reported it, not as the forger did ("forged").
        [['EXITED', 0, 'Command exited with code 0']],
        id,
      );
    }
    await cluster.assertOnlyClusterLeft();
  });
}
