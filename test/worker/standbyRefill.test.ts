/**
 * When a worker starts its next standby executor after a launch took the last one
 * (Worker.takeStandby): a little later if a core is still free here, else not before an executor
 * or a driver ends, so that the standby's start-up takes no CPU from tasks using every core. A
 * real Worker with the real CLI (dist/wick.cjs: run `npm run build` first) on a ManualClock.
 */
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { killProcessTree } from '../../backend/worker/process/kill.js';
import { waitFor } from '../helpers/processes.js';
import { executorSpec, silentDriver } from '../helpers/standby.js';
import { MockMaster, registeredWorker, type TestWorker } from '../helpers/workerHarness.js';

/** After a take, how long the worker waits before it may start the next standby (Worker.ts). */
const REFILL_MS = 3000;

/**
 * Takes the standby for an executor launch; returns the refill timer the take set on the worker's
 * clock, which says when it has fired.
 */
async function takeTheStandby(
  t: TestContext,
  w: TestWorker,
  id: string,
): Promise<{ fired: boolean }> {
  await waitFor('a standby', () => w.worker.prestart?.standbyPid !== undefined, t.signal);
  const spec = executorSpec(w.workDir, await silentDriver(t), {}, id);
  const refills: { fired: boolean }[] = [];
  const setTimeout = w.clock.setTimeout;
  w.clock.setTimeout = (fn, ms) => {
    const refill = { fired: false };
    refills.push(refill);
    return setTimeout.call(
      w.clock,
      () => {
        fn();
        refill.fired = true;
      },
      ms,
    );
  };
  let launched: ReturnType<typeof w.worker.takeStandby>;
  try {
    launched = w.worker.takeStandby(spec);
  } finally {
    w.clock.setTimeout = setTimeout;
  }
  assert.ok(launched, 'the launch was served by the standby');
  t.after(() => killProcessTree(launched.pid, launched.marker, 2000));
  assert.equal(w.worker.prestart?.standbyPid, undefined);
  assert.equal(refills.length, 1, 'the take set one timer: the refill');
  return refills[0] as { fired: boolean };
}

test('with every core in use, no standby starts after a take until something ends', async (t) => {
  const m = await MockMaster.start(t);
  const w = await registeredWorker(t, m, { cores: 1 });
  t.after(() => w.worker.prestart?.stop());
  // The launch's executor holds the worker's only core, as LaunchExecutor accounts it.
  w.worker.resources.reserve(1, 0);
  const refill = await takeTheStandby(t, w, '0');
  w.clock.advance(10 * REFILL_MS);
  assert.ok(refill.fired, 'the refill timer has fired: the worker has decided');
  assert.equal(w.worker.prestart?.standbyPid, undefined, 'no standby while the core is used');
});

test('with a core still free, the next standby starts a little after a take', async (t) => {
  const m = await MockMaster.start(t);
  const w = await registeredWorker(t, m, { cores: 2 });
  t.after(() => w.worker.prestart?.stop());
  w.worker.resources.reserve(1, 0);
  await takeTheStandby(t, w, '0');
  w.clock.advance(REFILL_MS - 1);
  assert.equal(w.worker.prestart?.standbyPid, undefined, 'not at once');
  w.clock.advance(1);
  assert.ok(w.worker.prestart?.standbyPid, 'a standby for the free core');
});
