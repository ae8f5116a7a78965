/**
 * A worker host cut off from the network and then restored, while an application runs on it:
 * the master marks the worker DEAD after wick.worker.timeout (its executors LOST), and when the
 * link comes back the worker's next heartbeat is answered with ReconnectWorker, it registers
 * again (ALIVE), and the master kills the executors it still runs that the master has written off.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AppSummary } from '../../backend/protocol/state.js';
import { hostsUnavailable, startHosts } from '../helpers/hosts.js';
import { waitFor } from '../helpers/processes.js';

const TIMEOUTS = { 'wick.worker.timeout': '2s' };

test('a worker host cut off is DEAD after the timeout, then ALIVE again with its executors reconciled', {
  skip: hostsUnavailable(),
  timeout: 180_000,
}, async (t) => {
  const net = await startHosts(t, ['master', 'w1', 'w2', 'user']);
  const master = await net.host('master').startMaster({ conf: TIMEOUTS });
  const url = master.url;
  const w1 = await net.host('w1').startWorker(url, { cores: 1, conf: TIMEOUTS });
  await net.host('w2').startWorker(url, { cores: 1, conf: TIMEOUTS });
  const user = net.host('user');

  const status = async () => {
    const r = await user.wick(['status', '--json', '--master', url]);
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout) as { workers: { id: string; host: string; state: string }[] };
  };
  const appStatus = async (appId: string) => {
    const r = await user.wick(['status', '--json', '--master', url, appId]);
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout) as AppSummary;
  };
  const w1State = async () => (await status()).workers.find((w) => w.id === w1.workerId)?.state;

  // Two tasks that block until killed: one executor on each worker, both busy.
  const driver = user.startWick(['submit', '--master', url, 'test/fixtures/apps/until-killed.ts']);
  const appId = (await driver.waitForStderr(/app ID (app-\S+)/))[1] as string;
  const onW1 = await waitFor(
    'a RUNNING executor on each worker',
    async () => {
      const app = await appStatus(appId);
      const running = app.executors.filter((e) => e.state === 'RUNNING');
      const hosts = new Set(running.map((e) => e.workerId));
      return hosts.size === 2 ? running.find((e) => e.workerId === w1.workerId) : undefined;
    },
    t.signal,
  );

  const cutAt = master.stderr.length;
  await net.host('w1').cut();
  await master.waitForStderr(
    new RegExp(`Removing ${w1.workerId} because we got no heartbeat in 2 seconds`),
    cutAt,
  );
  assert.equal(await w1State(), 'DEAD');
  const lost = (await appStatus(appId)).removedExecutors.find((e) => e.id === onW1.id);
  assert.equal(lost?.state, 'LOST');
  // The worker itself never noticed: it is still running, heartbeating into the void.
  assert.ok(w1.isRunning);

  await net.host('w1').restore();
  await master.waitForStderr(/Asking it to re-register/, cutAt);
  await waitFor('w1 ALIVE again', async () => (await w1State()) === 'ALIVE', t.signal);
  // Reconciled: the executor the master wrote off, still running on w1, is killed.
  await master.waitForStderr(
    new RegExp(
      `Killing executor ${appId}/${onW1.id} on ${w1.workerId}: the master does not know it`,
    ),
    cutAt,
  );
  await w1.waitForStderr(new RegExp(`Executor ${appId}/${onW1.id} finished with state KILLED`));

  const kill = await user.wick(['kill', '--master', url, appId]);
  assert.equal(kill.code, 0, kill.stderr);
  await driver.closed;
});
