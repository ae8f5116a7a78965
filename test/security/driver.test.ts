/**
 * Hostile peers against a real driver (issue 17, finding 4; docs/protocol.md, "Who may do
 * what"): a forged `StatusUpdate` with the result of a task that is running, and what only the
 * master may tell the driver (`ExecutorUpdated`, `ApplicationRemoved`). Once with the cluster
 * running open, once authenticating (the default): the peer is refused (an ask with -32030),
 * the refusal logged once per connection, and the job's answer stays exact, the driver exiting 0.
 *
 * The driver is `wick submit`'s own process (client deploy mode), found by the address the master
 * publishes for its application. With authentication on it lets in only its application's key:
 * a stranger, the cluster secret and another application's key are refused at the handshake, and
 * its own key (the executor's, as the application's code could read it) on a connection other
 * than the executor's is refused message by message.
 *
 * Why test/security/ mirrors no one source file: see worker.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ApplicationRemoved, ExecutorUpdated } from '../../backend/protocol/app.js';
import { StatusUpdate } from '../../backend/protocol/executor.js';
import {
  AppDir,
  appIdIn,
  eventually,
  type SharedCluster,
  startSharedCluster,
} from '../helpers/apps.js';
import { startWick, type WickProcess } from '../helpers/cli.js';
import { assertExactAnswer, GatedApp } from '../helpers/gatedApp.js';
import {
  type AppCredential,
  appKey,
  clusterSecret,
  confArgs,
  credentialOf,
  type Guise,
  HostilePeer,
  MODES,
  type Mode,
  processLog,
  refusedAtHandshake,
  refusedOnce,
} from '../helpers/hostile.js';
import { isAlive } from '../helpers/processes.js';

const apps = new AppDir();
after(() => apps.remove());

for (const mode of MODES) describe(`a driver, ${mode.name}`, () => driverSuite(mode));

function driverSuite(mode: Mode): void {
  const tag = mode.open ? 'open' : 'auth';
  let cluster: SharedCluster;
  const app = new GatedApp(apps, `tasks-${tag}`);
  let driver: WickProcess;
  let appId: string;
  /** host:port the master publishes for the application's driver. */
  let address: string;
  let executor: { id: string; pid: number; credential: AppCredential | undefined };

  before(
    async () => {
      cluster = await startSharedCluster({
        workers: 1,
        cores: 2,
        conf: { ...mode.conf, 'wick.worker.executor.prestart': 'false' },
      });
      driver = startWick(['submit', '--master', cluster.url, ...confArgs(mode.conf), ...app.args], {
        mark: cluster.mark,
      });
      appId = await eventually(AbortSignal.timeout(30_000), () => appIdIn(driver.stderr()));
      // Both tasks (ids 0 and 1) run on executor 0's two cores, waiting at the gate.
      await eventually(AbortSignal.timeout(30_000), () => {
        const out = cluster.executorOutput(appId);
        return /\(TID 0\)/.test(out) && /\(TID 1\)/.test(out) ? true : undefined;
      });
      const s = await cluster.watch.waitFor(() => true);
      const published = cluster.watch.app(s, appId);
      assert.ok(published, JSON.stringify(s));
      address = published.driver.address;
      const e = published.executors[0];
      const p = cluster.others().find((p) => p.cmdline.includes(`--app-id ${appId}`));
      assert.ok(e && p, JSON.stringify(published));
      executor = { id: String(e.id), pid: p.pid, credential: credentialOf(p.pid) };
    },
    { timeout: 60_000 },
  );

  after(async () => {
    app.open();
    await driver?.exited;
    await cluster?.stop();
  });

  /** Its own application's key when authenticating (the only one it lets in); else a stranger. */
  const guise = (): Guise =>
    mode.open
      ? { kind: 'stranger' }
      : { kind: 'app', credential: executor.credential as AppCredential };

  test('with authentication on, only its application’s key gets in', {
    skip: mode.open,
  }, async (t) => {
    assert.match(
      await refusedAtHandshake(t, address, { kind: 'stranger' }),
      /^Authentication required/,
    );
    assert.match(
      await refusedAtHandshake(t, address, { kind: 'guesser' }),
      /^This RpcEnv does not accept cluster keys/,
    );
    const secret = clusterSecret();
    assert.match(
      await refusedAtHandshake(t, address, { kind: 'secret', secret }),
      /^This RpcEnv does not accept cluster keys/,
    );
    const another = appKey(secret, 'app-20261202000000-0666');
    assert.match(
      await refusedAtHandshake(t, address, { kind: 'app', credential: another }),
      /^This RpcEnv does not accept app:app-20261202000000-0666 keys/,
    );
  });

  test('a forged StatusUpdate with the result of a running task is refused', async (t) => {
    const g = guise();
    const canary = { to: 'AppClient', message: ApplicationRemoved({ message: 'forged' }) };
    // As the executor that runs the task, and as an executor of its own choosing.
    for (const executorId of [executor.id, 'mallory']) {
      const peer = await HostilePeer.connect(t, address, g);
      await refusedOnce({
        log: processLog(driver),
        peer,
        to: 'CoarseGrainedScheduler',
        message: StatusUpdate({ executorId, taskId: 0, state: 'FINISHED', result: [-1, -1, -1] }),
        canary,
      });
      peer.close();
    }
    assert.ok(isAlive(executor.pid));
    assert.doesNotMatch(driver.stdout(), /squares/, 'the job ended before its gate opened');
  });

  test('what only the master tells the driver is refused from anyone else', async (t) => {
    const peer = await HostilePeer.connect(t, address, guise());
    await refusedOnce({
      log: processLog(driver),
      peer,
      to: 'AppClient',
      message: ExecutorUpdated({
        id: Number(executor.id),
        state: 'LOST',
        message: 'forged',
        workerLost: true,
      }),
      canary: { to: 'AppClient', message: ApplicationRemoved({ message: 'forged' }) },
    });
    peer.close();
    assert.doesNotMatch(driver.stderr(), /forged/);
  });

  test('the job’s answer stays exact and the driver exits 0', { timeout: 60_000 }, async () => {
    app.open();
    const { code } = await driver.exited;
    assert.equal(code, 0, driver.stderr());
    assertExactAnswer(driver.stdout());
    // The executor was never taken for lost: its tasks ran once, on it.
    assert.doesNotMatch(driver.stderr(), /Removed executor|rerunning/);
    const s = await cluster.watch.waitFor(
      (s) => cluster.watch.app(s, appId)?.removedExecutors[0]?.state === 'EXITED',
    );
    assert.deepEqual(
      cluster.watch.app(s, appId)?.removedExecutors.map((e) => [e.id, e.exitStatus]),
      [[Number(executor.id), 0]],
    );
    await cluster.assertOnlyClusterLeft();
  });
}
