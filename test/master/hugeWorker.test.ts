/**
 * A worker offering as many cores as a worker may (and one offering 10^9, which froze the master
 * for 128 s when cores were handed out one per loop turn), against a real master: the first is
 * scheduled at once for an application that wants every core, `wick status` answering within a
 * second all the while; the second is refused with InvalidParams naming the field and the bound.
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { MAX_WORKER_CORES } from '../../backend/protocol/bounds.js';
import { RpcErrorCode } from '../../backend/rpc/index.js';
import { assertBuilt, runWick } from '../helpers/cli.js';
import { startMaster } from '../helpers/cluster.js';
import { notify, OPEN, openCliEnv, registerWorkerMessage } from '../helpers/fakeWorkers.js';
import { checkNothingLeftRunning } from '../helpers/leaks.js';
import { RawClient } from '../helpers/peer.js';
import { within } from '../helpers/within.js';

before(assertBuilt);
checkNothingLeftRunning();

test('a worker with the most cores allowed and an app wanting 10^9 schedule at once; 10^9 cores are refused', {
  timeout: 120_000,
}, async (t) => {
  const cli = openCliEnv(t);
  const master = await startMaster(t, { conf: { ...OPEN, 'wick.worker.timeout': '1h' } });

  // Above the bound: refused before any handler runs, naming the field, the bound and the value.
  const hostile = await RawClient.connect(master.address, t);
  await hostile.hello('client-hostile');
  const tooMany = await hostile.ask('client-hostile', 'Master', {
    ...registerWorkerMessage(0, 'client-hostile', 'hostile', {}),
    cores: 1e9,
  });
  assert.equal(tooMany.error?.code, RpcErrorCode.InvalidParams);
  assert.match(
    tooMany.error?.message ?? '',
    new RegExp(
      `RegisterWorker: field /cores expected integer to be less or equal to ${MAX_WORKER_CORES}, got 1000000000`,
    ),
  );

  // At the bound: a worker (a socket) offering MAX_WORKER_CORES.
  const worker = await RawClient.connect(master.address, t);
  await worker.hello('client-huge');
  worker.discard = true;
  const registered = new Promise<void>((resolve) => {
    worker.onFrame = (f) => {
      if (f.method === 'RegisteredWorker') resolve();
    };
  });
  const huge = registerWorkerMessage(1, 'client-huge', 'huge', { cores: MAX_WORKER_CORES });
  await notify(worker, 'client-huge', 'Master', huge);
  await within(10_000, registered, 'the huge worker registered');
  const launched = new Promise<{ cores: number }>((resolve) => {
    worker.onFrame = (f) => {
      if (f.method === 'LaunchExecutor') {
        resolve((f.params as { message: { cores: number } }).message);
      }
    };
  });

  // An application that wants 10^9 cores, its driver a socket too.
  const driver = await RawClient.connect(master.address, t);
  await driver.hello('client-greedy');
  const t0 = performance.now();
  await notify(driver, 'client-greedy', 'Master', {
    type: 'RegisterApplication',
    appDescription: {
      name: 'greedy',
      user: 'u',
      maxCores: 1e9,
      memoryPerExecutorMB: 512,
      command: { argv: ['node', 'x.js'], env: {} },
    },
    driver: { address: 'client-greedy', name: 'AppClient' },
  });
  // The CLI and a raw client ask while the master schedules.
  const s0 = performance.now();
  const status = runWick(['status', '--master', master.url], { env: cli }).then((r) => ({
    ...r,
    ms: performance.now() - s0,
  }));
  const asked = hostile
    .ask('client-hostile', 'Master', { type: 'RequestMasterState', limit: 1 })
    .then((f) => ({ f, ms: performance.now() - s0 }));
  const added = await within(
    10_000,
    driver.take((f) => f.method === 'ExecutorAdded'),
    'the executor granted',
  );
  const scheduledMs = performance.now() - t0;
  assert.equal((added.params as { message: { cores: number } }).message.cores, MAX_WORKER_CORES);
  assert.equal((await launched).cores, MAX_WORKER_CORES);
  const r = await status;
  const a = await asked;
  t.diagnostic(
    `executor of ${MAX_WORKER_CORES} cores granted ${scheduledMs.toFixed(1)} ms after the registration; meanwhile RequestMasterState answered in ${a.ms.toFixed(1)} ms, wick status in ${r.ms.toFixed(0)} ms`,
  );
  assert.ok(a.f.result, JSON.stringify(a.f));
  assert.ok(a.ms < 1_000, `the master answered after ${Math.round(a.ms)} ms`);
  assert.equal(r.code, 0, r.stderr);
  // The "within a second" is the master's answer, above; the CLI adds its own start-up
  // (0.1–0.3 s idle, 0.8 s seen beside this test's own load on two cores).
  assert.ok(r.ms < 2_000, `wick status answered after ${Math.round(r.ms)} ms`);
  assert.ok(scheduledMs < 1_000, `scheduling took ${Math.round(scheduledMs)} ms`);
  const after = await runWick(['status', '--master', master.url], { env: cli });
  assert.equal(after.code, 0, after.stderr);
  assert.match(after.stdout, new RegExp(`cores ${MAX_WORKER_CORES}/${MAX_WORKER_CORES} `));
  assert.match(after.stdout, new RegExp(`greedy {2}RUNNING {2}cores ${MAX_WORKER_CORES}`));
});
