/**
 * Hostile peers against a real worker (issue 17, findings 1 and 2; docs/protocol.md, "Who may do
 * what"): a peer that is not the master this worker dialled sends `LaunchDriver` and
 * `LaunchExecutor` (a `/bin/sh -c 'id > …'` command), `KillExecutor` of a running executor,
 * `MasterChanged`, and announces the master's address as its own. Every case runs once in a
 * cluster that runs open and once in one that authenticates (the default); in each, the peer is
 * refused, the refusal is logged once per connection, and nothing changed: the command never ran,
 * the executor kept running, the worker still follows its master, and the application it runs
 * ends with the exact answer, as does one submitted after the attacks.
 *
 * test/security/ is a suite across roles (a worker here; the master, a driver and where the
 * secret goes in the files next to this one), not the tests of one source file: each attack
 * crosses the RPC layer, the role's checks and its state, in real daemons.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { WickConf } from '../../backend/conf/WickConf.js';
import {
  ApplicationFinished,
  KillExecutor,
  LaunchDriver,
  LaunchExecutor,
  MasterChanged,
} from '../../backend/protocol/deploy.js';
import { RequestWorkerState } from '../../backend/protocol/worker.js';
import { type RpcEndpointRef, RpcEnv } from '../../backend/rpc/index.js';
import {
  AppDir,
  appIdIn,
  eventually,
  type SharedCluster,
  startSharedCluster,
} from '../helpers/apps.js';
import { runWick, startWick, type WickProcess } from '../helpers/cli.js';
import { assertExactAnswer, GatedApp } from '../helpers/gatedApp.js';
import {
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
  refusedOnce as refused,
  refusedAtHandshake,
} from '../helpers/hostile.js';
import { isAlive } from '../helpers/processes.js';
import { testProtocol } from '../helpers/protocol.js';

const apps = new AppDir();
const pi = join(import.meta.dirname, '..', '..', 'examples', 'pi.ts');
after(() => apps.remove());

for (const mode of MODES) describe(`a worker, ${mode.name}`, () => workerSuite(mode));

function workerSuite(mode: Mode): void {
  const tag = mode.open ? 'open' : 'auth';
  /** What the forged commands would write: it must never appear. */
  const ran = join(apps.path, `ran-${tag}`);
  const shell = ['/bin/sh', '-c', `id > ${ran}`];
  let cluster: SharedCluster;
  let app: GatedApp;
  let driver: WickProcess;
  let appId: string;
  let executor: { execId: number; pid: number };
  let client: RpcEnv;
  let workerRef: RpcEndpointRef;
  /** Every guise a peer can take in this mode that completes the handshake. */
  let guises: Guise[];
  /** Peers that announced another env's address: they must receive nothing. */
  const impostors: HostilePeer[] = [];

  const worker = () => cluster.workers[0] as NonNullable<SharedCluster['workers'][0]>;
  const workerState = () => workerRef.ask(RequestWorkerState({}));

  before(
    async () => {
      // Executors spawned fresh (no standby process), so that each has its key in its environment.
      cluster = await startSharedCluster({
        workers: 1,
        cores: 2,
        conf: { ...mode.conf, 'wick.worker.executor.prestart': 'false' },
      });
      client = await RpcEnv.create({
        protocol: testProtocol,
        name: 'testClient',
        clientMode: true,
        conf: new WickConf(mode.conf),
      });
      workerRef = await client.setupEndpointRef(worker().address, 'Worker');
      app = new GatedApp(apps, `gated-${tag}`);
      driver = startWick(['submit', '--master', cluster.url, ...confArgs(mode.conf), ...app.args], {
        mark: cluster.mark,
      });
      appId = await eventually(AbortSignal.timeout(30_000), () => appIdIn(driver.stderr()));
      const running = await eventually(AbortSignal.timeout(30_000), () => {
        const out = cluster.executorOutput(appId);
        return /Running task 0\.0/.test(out) && /Running task 1\.0/.test(out) ? true : undefined;
      });
      assert.ok(running);
      const state = await workerState();
      const e = state.executors.find((x) => x.appId === appId);
      assert.ok(e?.pid && e.execId !== undefined, JSON.stringify(state));
      executor = { execId: e.execId, pid: e.pid };
      guises = mode.open
        ? [{ kind: 'stranger' }]
        : [
            { kind: 'secret', secret: clusterSecret() },
            {
              kind: 'app',
              credential: credentialOf(e.pid) as NonNullable<ReturnType<typeof credentialOf>>,
            },
          ];
      if (!mode.open) assert.equal(guises[1]?.kind === 'app' && guises[1].credential.id, appId);
    },
    { timeout: 60_000 },
  );

  after(async () => {
    app?.open();
    for (const p of impostors) p.close();
    await driver?.exited;
    await client?.stop();
    await cluster?.stop();
  });

  /** Refusals of a stranger at the door, when there is a door: without a key, and with a wrong one. */
  async function strangersAtTheDoor(t: import('node:test').TestContext): Promise<void> {
    if (mode.open) return;
    const without = await refusedAtHandshake(t, worker().address, { kind: 'stranger' });
    assert.match(without, /^Authentication required/);
    const wrong = await refusedAtHandshake(t, worker().address, { kind: 'guesser' });
    assert.match(wrong, /^Authentication failed/);
  }

  /** Refused, logged once; ApplicationFinished of the real application is the canary. */
  const refusedOnce = (peer: HostilePeer, message: { type: string; [k: string]: unknown }) =>
    refused({
      log: daemonLog(worker()),
      peer,
      to: 'Worker',
      message,
      canary: { to: 'Worker', message: ApplicationFinished({ id: appId }) },
    });

  test('LaunchDriver from anyone but the master it dialled runs nothing', async (t) => {
    await strangersAtTheDoor(t);
    const launch = LaunchDriver({
      driverId: 'driver-20261202000000-0666',
      driverDesc: {
        appPath: apps.write(`driver-${tag}.sh`, `id > ${ran}\n`),
        mem: 64,
        cores: 1,
        supervise: false,
        command: { argv: shell, env: {} },
      },
    });
    for (const g of guises) {
      const peer = await HostilePeer.connect(t, worker().address, g);
      await refusedOnce(peer, launch);
      // Answered after the worker handled the forged frames: it runs no driver.
      const s = await workerState();
      assert.deepEqual([...s.drivers, ...s.finishedDrivers], [], guiseText(g));
      assert.equal(existsSync(ran), false);
      peer.close();
    }
  });

  test('LaunchExecutor with the masterUrl the master publishes runs nothing', async (t) => {
    await strangersAtTheDoor(t);
    const launch = LaunchExecutor({
      masterUrl: cluster.url,
      appId: 'app-20261202000000-0666',
      execId: 0,
      appDesc: {
        name: 'forged',
        user: 'mallory',
        memoryPerExecutorMB: 64,
        command: { argv: shell, env: {} },
      },
      cores: 1,
      memory: 64,
    });
    for (const g of guises) {
      const peer = await HostilePeer.connect(t, worker().address, g);
      await refusedOnce(peer, launch);
      const s = await workerState();
      assert.deepEqual(
        [...s.executors, ...s.finishedExecutors].map((e) => `${e.appId}/${e.execId}`),
        [`${appId}/${executor.execId}`],
        guiseText(g),
      );
      assert.equal(existsSync(ran), false);
      peer.close();
    }
  });

  test('KillExecutor of a running executor, with the published masterUrl: it keeps running', async (t) => {
    await strangersAtTheDoor(t);
    const kill = KillExecutor({ masterUrl: cluster.url, appId, execId: executor.execId });
    for (const g of guises) {
      const peer = await HostilePeer.connect(t, worker().address, g);
      await refusedOnce(peer, kill);
      const s = await workerState();
      const e = s.executors.find((x) => x.appId === appId && x.execId === executor.execId);
      assert.equal(e?.state, 'RUNNING', `${guiseText(g)}: ${JSON.stringify(s.executors)}`);
      assert.ok(isAlive(executor.pid), `${guiseText(g)}: the executor's process died`);
      peer.close();
    }
    const m = await cluster.watch.waitFor(() => true);
    const listed = m.activeApps.find((a) => a.id === appId)?.executors ?? [];
    assert.deepEqual(
      listed.map((e) => [e.id, e.state]),
      [[executor.execId, 'RUNNING']],
    );
  });

  test('a forged MasterChanged does not take the worker over: it follows its master', async (t) => {
    await strangersAtTheDoor(t);
    // The worker's own master (a configured one) and an address of the forger's choosing.
    const real = MasterChanged({
      master: { address: cluster.master.address, name: 'Master' },
      masterWebUiUrl: 'http://127.0.0.1:1/forged',
    });
    const elsewhere = MasterChanged({
      master: { address: '127.0.0.1:1', name: 'Master' },
      masterWebUiUrl: 'http://127.0.0.1:1/forged',
    });
    for (const g of guises) {
      // A holder of the cluster secret naming a configured master is a master by definition
      // (docs/protocol.md): it is refused only for an address that is not one.
      const forged = g.kind === 'secret' ? elsewhere : real;
      const peer = await HostilePeer.connect(t, worker().address, g);
      await refusedOnce(peer, forged);
      if (g.kind !== 'secret') {
        await peer.tell('Worker', elsewhere);
        assertNotPermitted(await peer.ask('Worker', elsewhere), /^Not permitted: MasterChanged/);
      }
      const s = await workerState();
      assert.equal(s.masterUrl, cluster.url, guiseText(g));
      assert.equal(s.masterWebUiUrl, cluster.master.webUiUrl, guiseText(g));
      // The forger hangs up: the worker does not re-register anywhere, nor exit.
      peer.close();
      await peer.raw.waitClosed();
    }
    const s = await workerState();
    assert.equal(s.masterUrl, cluster.url);
    assert.ok(isAlive(executor.pid), "the executor's process died");
    const m = await cluster.watch.waitFor(() => true);
    assert.deepEqual(
      m.workers.map((w) => [w.id, w.state]),
      [[worker().workerId, 'ALIVE']],
    );
    assert.ok(worker().isRunning);
  });

  test('a peer announcing the master’s address to the worker, or the worker’s to the master, gets nothing meant for them', async () => {
    const g = guises[0] as Guise;
    // Not closed with this test: the suite's after() closes them.
    impostors.push(
      await HostilePeer.connect(undefined, worker().address, g, cluster.master.address),
    );
    impostors.push(
      await HostilePeer.connect(undefined, cluster.master.address, g, worker().address),
    );
    // Checked at the end of the file: they stay connected while the application ends (the worker
    // reports its executor, the master tells the worker it finished) and another runs.
  });

  test('the application ends with the exact answer; a later one runs; nothing the forgers sent ran', {
    timeout: 60_000,
  }, async () => {
    app.open();
    const { code } = await driver.exited;
    assert.equal(code, 0, driver.stderr());
    assertExactAnswer(driver.stdout());
    const ended = await cluster.watch.waitFor(
      (s) =>
        cluster.watch.app(s, appId)?.state === 'FINISHED' &&
        cluster.watch.app(s, appId)?.removedExecutors[0]?.state === 'EXITED',
    );
    // It ended by itself when the driver stopped it (EXITED 0, as its worker reported), not killed.
    const removed = cluster.watch.app(ended, appId)?.removedExecutors ?? [];
    assert.deepEqual(
      removed.map((e) => [e.id, e.state, e.exitStatus]),
      [[executor.execId, 'EXITED', 0]],
    );

    const later = await runWick(
      ['submit', '--master', cluster.url, ...confArgs(mode.conf), pi, '4'],
      {
        mark: cluster.mark,
      },
    );
    assert.equal(later.code, 0, later.stderr);
    assert.match(later.stdout, /Pi is roughly 3\.1/);
    assert.match(
      worker().stderr,
      new RegExp(`Asked to launch executor ${appIdIn(later.stderr)}/0`),
    );
    await cluster.assertOnlyClusterLeft();

    for (const p of impostors) {
      assert.ok(p.raw.isOpen, `${p.from}'s connection was closed`);
      assert.deepEqual(p.unasked, [], `${p.from} received what was meant for the env it named`);
    }
    assert.equal(existsSync(ran), false, 'a forged command ran');
    const s = await workerState();
    assert.equal(s.masterUrl, cluster.url);
    assert.ok(worker().isRunning);
  });
}
