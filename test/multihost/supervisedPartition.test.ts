/**
 * A `--supervise` cluster-mode driver whose worker host is cut off and comes back (SPARK-19900).
 * The master writes the worker off after wick.worker.timeout and relaunches the driver on the
 * other worker under a new id, while the first run lives on behind the cut. When the link comes
 * back, the master has the first run killed (it no longer knows its id), the worker's late KILLED
 * for it ends nothing, and the first run's application ends with its driver. Afterwards exactly
 * one driver of the submission runs: the relaunch. (Under one id, the late KILLED removed the
 * relaunched driver too: 0 drivers where Spark has 1.)
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { MessageOf } from '../../backend/protocol/registry.js';
import type { MasterStateResponse } from '../../backend/protocol/state.js';
import { hostsUnavailable, startHosts } from '../helpers/hosts.js';
import { waitFor } from '../helpers/processes.js';

const TIMEOUTS = { 'wick.worker.timeout': '2s' };

type State = MessageOf<typeof MasterStateResponse>;

test('a supervised driver cut off with its worker runs exactly once after the link is back: the relaunch, under a new id', {
  skip: hostsUnavailable(),
  timeout: 240_000,
}, async (t) => {
  const net = await startHosts(t, ['master', 'w1', 'w2', 'user']);
  const master = await net.host('master').startMaster({ conf: TIMEOUTS });
  const url = master.url;
  // Room on either worker for a driver and its executors, with the other run's still there.
  const workers = [
    await net.host('w1').startWorker(url, { cores: 4, conf: TIMEOUTS }),
    await net.host('w2').startWorker(url, { cores: 4, conf: TIMEOUTS }),
  ];
  const user = net.host('user');
  const state = async (): Promise<State> => {
    const r = await user.wick(['status', '--json', '--master', url]);
    assert.equal(r.code, 0, r.stderr);
    const s = JSON.parse(r.stdout);
    return {
      ...s,
      activeDrivers: s.activedrivers,
      completedDrivers: s.completeddrivers,
      activeApps: s.activeapps,
      completedApps: s.completedapps,
    } as State;
  };

  const submit = await user.wick([
    'submit',
    '--master',
    url,
    '--deploy-mode',
    'cluster',
    '--supervise',
    '--total-executor-cores',
    '1',
    '--executor-memory',
    '128m',
    '--driver-memory',
    '128m',
    'test/fixtures/apps/until-killed.ts',
  ]);
  assert.equal(submit.code, 0, submit.stderr);
  const driverId = /^(driver-\S+)$/m.exec(submit.stdout)?.[1] as string;
  assert.ok(driverId, submit.stdout);

  // The first run RUNNING, with its application.
  const { onWorker, appId } = await waitFor(
    'the driver and its application RUNNING',
    async () => {
      const s = await state();
      const d = s.activeDrivers.find((x) => x.id === driverId);
      const apps = s.activeApps.filter((a) => a.state === 'RUNNING');
      return d?.state === 'RUNNING' && d.workerId && apps.length === 1
        ? { onWorker: d.workerId, appId: apps[0]?.id as string }
        : undefined;
    },
    t.signal,
  );
  const cutWorker = workers.find((w) => w.workerId === onWorker) as (typeof workers)[number];
  const cutHost = cutWorker === workers[0] ? net.host('w1') : net.host('w2');
  const other = workers.find((w) => w !== cutWorker) as (typeof workers)[number];

  const cutAt = master.stderr.length;
  const cutTime = performance.now();
  await cutHost.cut();
  await master.waitForStderr(
    new RegExp(`Removing ${onWorker} because we got no heartbeat in 2 seconds`),
    cutAt,
  );
  const [, relaunched] = (await master.waitForStderr(
    new RegExp(`Re-launching driver ${driverId} as (driver-\\S+)`),
    cutAt,
  )) as unknown as [string, string];
  assert.notEqual(relaunched, driverId);
  const newAppId = await waitFor(
    'the relaunch RUNNING on the other worker, with an application of its own',
    async () => {
      const s = await state();
      const d = s.activeDrivers.find((x) => x.id === relaunched);
      const app = s.activeApps.find((a) => a.id !== appId && a.state === 'RUNNING');
      return d?.state === 'RUNNING' && d.workerId === other.workerId ? app?.id : undefined;
    },
    t.signal,
  );
  const relaunchMs = performance.now() - cutTime;
  // The first run lives on behind the cut; the master keeps its record, RELAUNCHING.
  assert.ok(cutWorker.isRunning);
  let s = await state();
  assert.equal(s.completedDrivers.find((d) => d.id === driverId)?.state, 'RELAUNCHING');
  assert.equal(s.activeDrivers.find((d) => d.id === relaunched)?.relaunchedFrom, driverId);

  const restoreAt = master.stderr.length;
  await cutHost.restore();
  // Reconciled: the master kills the run it no longer knows, and its late KILLED ends nothing.
  await master.waitForStderr(
    new RegExp(`Killing driver ${driverId} on ${onWorker}: the master does not know it`),
    restoreAt,
  );
  await cutWorker.waitForStderr(new RegExp(`Driver ${driverId} finished with state KILLED`));
  await master.waitForStderr(new RegExp(`Asked to remove unknown driver: ${driverId}`), restoreAt);
  // The first run's application ends with its driver.
  s = await waitFor(
    'the first run’s application no longer RUNNING',
    async () => {
      const st = await state();
      return st.activeApps.some((a) => a.id === appId) ? undefined : st;
    },
    t.signal,
  );
  assert.ok(
    s.completedApps.some((a) => a.id === appId && a.state !== 'RUNNING'),
    `${appId} completed`,
  );
  // Exactly one driver of the submission runs: the relaunch, on the other worker, with its app.
  assert.deepEqual(
    s.activeDrivers.map((d) => [d.id, d.state, d.workerId]),
    [[relaunched, 'RUNNING', other.workerId]],
  );
  assert.equal(s.activeApps.find((a) => a.id === newAppId)?.state, 'RUNNING');
  assert.equal(s.completedDrivers.find((d) => d.id === driverId)?.state, 'RELAUNCHING');
  t.diagnostic(`relaunched and RUNNING ${relaunchMs.toFixed(0)} ms after the cut`);

  // The submitted id still ends the submission.
  const kill = await user.wick(['kill', '--master', url, driverId]);
  assert.equal(kill.code, 0, kill.stderr);
  assert.match(kill.stdout + kill.stderr, new RegExp(`the relaunch of ${driverId}`));
  await waitFor('no driver left', async () => (await state()).activeDrivers.length === 0, t.signal);
});
