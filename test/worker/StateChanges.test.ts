/**
 * A real Worker's page is told of every change of what it shows, whichever handler or runner
 * made it (StateChanges.ts): each announcement reads the state, and once an executor and a
 * driver have been launched, have run and been killed, and a log follow came and went, the
 * state read after the last announcement is the final state. A change that did not announce
 * itself would leave that read stale.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KillDriver, KillExecutor } from '../../backend/protocol/deploy.js';
import type { MessageOf } from '../../backend/protocol/registry.js';
import type { WorkerStateResponse } from '../../backend/protocol/worker.js';
import { checkNothingLeftRunning } from '../helpers/leaks.js';
import { waitFor } from '../helpers/processes.js';
import { driverLaunch, MockMaster, nodeApp, registeredWorker } from '../helpers/workerHarness.js';

checkNothingLeftRunning();

type State = MessageOf<typeof WorkerStateResponse>;

const APP = 'app-20261130120000-0007';

/** The state without what changes with no announcement meant (pids come as processes start). */
function shown(s: State) {
  const strip = <T extends { pid?: number }>(r: T) => ({ ...r, pid: undefined });
  return {
    ...s,
    executors: s.executors.map(strip),
    finishedExecutors: s.finishedExecutors.map(strip),
    drivers: s.drivers.map(strip),
    finishedDrivers: s.finishedDrivers.map(strip),
  };
}

test('every change of what the worker page shows is announced', { timeout: 60_000 }, async (t) => {
  const master = await MockMaster.start(t);
  const w = await registeredWorker(t, master, { cores: 4 });
  let announced = 0;
  let lastRead: Promise<State> | undefined;
  const off = w.worker.onStateChange(() => {
    announced++;
    lastRead = w.state();
    lastRead.catch(() => {}); // the worker stopping at the test's end
  });
  t.after(off);
  const sleeper = nodeApp('setInterval(() => {}, 1000)');
  await master.launchRunning(APP, 0, sleeper);
  master.worker().send(driverLaunch('driver-20261130120000-0001', '/nowhere.js'));
  await waitFor(
    'the driver listed',
    async () => {
      const s = await w.state();
      return s.drivers.length + s.finishedDrivers.length > 0;
    },
    t.signal,
  );
  const from = master.rec.mark;
  master.worker().send(KillExecutor({ masterUrl: master.url, appId: APP, execId: 0 }));
  master.worker().send(KillDriver({ driverId: 'driver-20261130120000-0001' }));
  await master.executorState(APP, 0, 'KILLED', from);
  await waitFor(
    'nothing running',
    async () => {
      const s = await w.state();
      return s.executors.length === 0 && s.drivers.length === 0 && s.coresUsed === 0;
    },
    t.signal,
  );
  await w.barrier();
  assert.ok(announced > 0, 'nothing was announced');
  const final = await w.state();
  assert.ok(lastRead);
  assert.deepEqual(shown(await lastRead), shown(final), 'the page was left stale');
  off();
  assert.equal(final.finishedExecutors.length, 1);
});
