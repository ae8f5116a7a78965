/**
 * SIGPWR to a real worker process. With wick.decommission.enabled it decommissions (Spark's
 * spark.decommission.enabled): DECOMMISSIONED on the master, told by the worker itself; a task
 * that outlasts wick.worker.decommission.forceKillTimeout is killed with its executor, the worker
 * exits 0, and the task runs again elsewhere: the answer is exact. Without the setting, SIGPWR
 * ends the worker at once (Node's default) and the master marks it DEAD.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { WickContext } from '../../backend/app/index.js';
import {
  eventually,
  executorsRegistered,
  type SharedCluster,
  startSharedCluster,
} from '../helpers/apps.js';
import { startWorker } from '../helpers/cluster.js';

for (const k of ['WICK_MASTER', 'WICK_SUBMIT_CONF', 'WICK_APP_NAME', 'WICK_APP_DIR'])
  delete process.env[k];

const scratch = mkdtempSync(join(tmpdir(), 'wick-test-sigpwr-'));
let cluster: SharedCluster;

before(async () => {
  cluster = await startSharedCluster({
    workers: 2,
    workerConf: (i): Record<string, string> =>
      i === 0
        ? {
            'wick.decommission.enabled': 'true',
            'wick.worker.decommission.forceKillTimeout': '3s',
          }
        : {},
  });
});

after(async () => {
  await cluster?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

test('SIGPWR with wick.decommission.enabled: DECOMMISSIONED, its held task killed at the timeout and run elsewhere, the worker exits 0, the answer is exact', {
  timeout: 180_000,
}, async () => {
  const wc = await WickContext.create({ master: cluster.url, appName: 'sigpwr' });
  try {
    await executorsRegistered(wc, 2);
    const gate = join(scratch, 'gate');
    const started = join(scratch, 'started');
    const job = wc
      .parallelize([1, 2, 3, 4, 5, 6], 2)
      .map(
        (x, env) => {
          const fs = require('node:fs');
          fs.mkdirSync(env.started, { recursive: true });
          fs.writeFileSync(`${env.started}/${x}`, '');
          const pause = new Int32Array(new SharedArrayBuffer(4));
          while (!fs.existsSync(env.gate)) Atomics.wait(pause, 0, 0, 25);
          return x * x;
        },
        { gate, started },
      )
      .collect();
    // A task on each worker's executor (1 core each), held at the gate.
    await eventually(AbortSignal.timeout(120_000), () =>
      existsSync(started) && readdirSync(started).length >= 2 ? true : undefined,
    );
    const victim = cluster.workers[0] as SharedCluster['workers'][number];
    victim.signal('SIGPWR');
    await cluster.watch.waitFor(
      (s) => s.workers.find((w) => w.id === victim.workerId)?.state === 'DECOMMISSIONED',
    );
    assert.match(victim.stderr, /Received SIGPWR: decommissioning/);
    // The gate stays shut: the worker kills what still runs at the timeout, and leaves.
    assert.equal(await victim.exited, 0, victim.stderr);
    assert.match(
      victim.stderr,
      /still run after 3 s \(wick\.worker\.decommission\.forceKillTimeout\); killing them/,
    );
    writeFileSync(gate, '');
    assert.deepEqual(await job, [1, 4, 9, 16, 25, 36]);
    const s = await cluster.watch.waitFor(() => true);
    const w = s.workers.find((x) => x.id === victim.workerId);
    assert.equal(w?.state, 'DECOMMISSIONED');
    assert.deepEqual(w?.executors, []);
  } finally {
    await wc.stop();
  }
});

test('SIGPWR without wick.decommission.enabled ends the worker at once: DEAD on the master', {
  timeout: 60_000,
}, async (t) => {
  const worker = await startWorker(t, cluster.url, { cores: 1 });
  await cluster.watch.waitFor(
    (s) => s.workers.find((w) => w.id === worker.workerId)?.state === 'ALIVE',
  );
  worker.signal('SIGPWR');
  assert.equal(await worker.exited, null);
  assert.equal(worker.child.signalCode, 'SIGPWR');
  await cluster.watch.waitFor(
    (s) => s.workers.find((w) => w.id === worker.workerId)?.state === 'DEAD',
  );
  assert.doesNotMatch(worker.stderr, /decommission/i);
});
