/**
 * Decommissioning a worker under a running WordCount, on a real cluster (a master and 3 workers ×
 * 1 core; the driver is a WickContext in this test process): `wick decommission <worker-id>`
 * while a reduce task runs on the worker's executor. The worker turns DECOMMISSIONED on the
 * master (and in `wick status`); its running task is not killed but finishes; then its driver
 * stops the executor, the worker exits 0, and no executor of the application is left or started
 * there; its map outputs are gone with it and are computed again on the other executors when the
 * next job needs them; every answer is exact. And refused: an application's key may not send
 * DecommissionWorkersOnHosts, nor a holder of the secret a worker's WorkerDecommissioning.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { WickContext } from '../../backend/app/index.js';
import { DecommissionWorkersOnHosts } from '../../backend/protocol/client.js';
import { BoundPortsRequest, WorkerDecommissioning } from '../../backend/protocol/deploy.js';
import {
  eventually,
  executorsRegistered,
  type SharedCluster,
  startSharedCluster,
} from '../helpers/apps.js';
import { isAlive, runWick } from '../helpers/cli.js';
import { appKey, assertNotPermitted, clusterSecret, HostilePeer } from '../helpers/hostile.js';

for (const k of ['WICK_MASTER', 'WICK_SUBMIT_CONF', 'WICK_APP_NAME', 'WICK_APP_DIR'])
  delete process.env[k];

const scratch = mkdtempSync(join(tmpdir(), 'wick-test-decommission-'));
let cluster: SharedCluster;
let wc: WickContext;

before(async () => {
  cluster = await startSharedCluster({
    workers: 3,
    // Executors started fresh, so that each one's command line names its worker.
    conf: { 'wick.worker.executor.prestart': 'false' },
  });
  wc = await WickContext.create({ master: cluster.url, appName: 'wordcount, decommissioned' });
  await executorsRegistered(wc, 3);
});

after(async () => {
  await wc?.stop();
  await cluster?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

const N = 30_000;
const KEYS = 101;

/** The exact counts, computed here. */
function expectedCounts(): Map<string, number> {
  const m = new Map<string, number>();
  for (let x = 0; x < N; x++) m.set(`k${x % KEYS}`, (m.get(`k${x % KEYS}`) ?? 0) + 1);
  return m;
}

function assertExact(result: [string, number][]): void {
  assert.deepEqual(new Map(result), expectedCounts());
  assert.equal(result.length, KEYS);
}

test('wick decommission <worker-id> under a running WordCount: its task finishes, the worker leaves, the answer is exact', {
  timeout: 240_000,
}, async () => {
  const gate = join(scratch, 'gate');
  const started = join(scratch, 'started');
  const counts = wc
    .range(0, N, 1, 6)
    .map((x): [string, number] => [`k${x % 101}`, 1])
    .reduceByKey((a, b) => a + b, 3);
  // The reduce side waits at a gate, after saying which process (executor) runs it.
  const job = counts
    .mapPartitions(
      (it, env) => {
        const fs = require('node:fs');
        fs.mkdirSync(env.started, { recursive: true });
        fs.writeFileSync(`${env.started}/${process.pid}-${Math.random()}`, '');
        const pause = new Int32Array(new SharedArrayBuffer(4));
        while (!fs.existsSync(env.gate)) Atomics.wait(pause, 0, 0, 25);
        return it;
      },
      { gate, started },
    )
    .collect();

  // Each executor runs one reduce task (1 core each): the victim is worker 0's.
  const victim = cluster.workers[0] as SharedCluster['workers'][number];
  const executorPid = await eventually(AbortSignal.timeout(120_000), () => {
    const p = cluster
      .others()
      .find((x) => / executor /.test(x.cmdline) && x.cmdline.includes(victim.address));
    if (!p || !existsSync(started)) return undefined;
    return readdirSync(started).some((f) => f.startsWith(`${p.pid}-`)) ? p.pid : undefined;
  });

  const decommission = await runWick(['decommission', victim.workerId, '--master', cluster.url]);
  assert.equal(decommission.code, 0, decommission.stderr);
  assert.match(decommission.stdout, new RegExp(`^Decommissioning ${victim.workerId}\\n$`));
  const s = await cluster.watch.waitFor(
    (x) => x.workers.find((w) => w.id === victim.workerId)?.state === 'DECOMMISSIONED',
  );
  const app = s.activeApps.find((a) => a.id === wc.appId);
  assert.equal(app?.executors.filter((e) => e.workerId === victim.workerId).length, 1);
  const status = await runWick(['status', '--master', cluster.url]);
  assert.match(status.stdout, new RegExp(`${victim.workerId}.*DECOMMISSIONED`));
  // Its running task is let finish: the executor runs on, held by the gate.
  assert.ok(isAlive(executorPid), 'the decommissioned worker’s executor still runs its task');
  assert.ok(victim.isRunning, 'the worker waits for it');

  writeFileSync(gate, '');
  assertExact(await job);
  assert.equal(await victim.exited, 0, victim.stderr);
  assert.match(victim.stderr, /Decommissioned \(the master asked\): nothing runs here/);
  assert.ok(!isAlive(executorPid));
  // Nothing of the application is left on it, and it never got another executor.
  const end = await cluster.watch.waitFor((x) => {
    const a = x.activeApps.find((y) => y.id === wc.appId);
    return a !== undefined && !a.executors.some((e) => e.workerId === victim.workerId);
  });
  const a = end.activeApps.find((y) => y.id === wc.appId);
  const onVictim = [...(a?.executors ?? []), ...(a?.removedExecutors ?? [])].filter(
    (e) => e.workerId === victim.workerId,
  );
  assert.equal(onVictim.length, 1, JSON.stringify(onVictim));
  assert.equal(onVictim[0]?.state, 'EXITED');
  assert.equal(onVictim[0]?.exitStatus, 0);
  const w = end.workers.find((x) => x.id === victim.workerId);
  assert.equal(w?.state, 'DECOMMISSIONED');
  assert.deepEqual(w?.executors, []);

  // Its map outputs went with its executor: the next job computes them again elsewhere.
  const ranBefore = wc.dagScheduler.stats.mapStagesRun;
  assertExact(await counts.collect());
  assert.equal(wc.dagScheduler.stats.mapStagesRun, ranBefore + 1, 'the lost map outputs rerun');
});

test('DecommissionWorkersOnHosts from an application key, or WorkerDecommissioning from a stranger to the worker: refused, the worker stays ALIVE', {
  timeout: 60_000,
}, async (t) => {
  const target = cluster.workers[1] as SharedCluster['workers'][number];
  const asApp = await HostilePeer.connect(t, cluster.master.address, {
    kind: 'app',
    credential: appKey(clusterSecret(), wc.appId),
  });
  assertNotPermitted(
    await asApp.ask(
      'Master',
      DecommissionWorkersOnHosts({ hostnames: ['127.0.0.1'], workerIds: [target.workerId] }),
    ),
    /^Not permitted: DecommissionWorkersOnHosts: it is sent by client/,
  );
  asApp.close();
  // The secret opens the client role, not another worker's: a worker's own word counts only
  // over the connection it registered on.
  const asSecret = await HostilePeer.connect(t, cluster.master.address, {
    kind: 'secret',
    secret: clusterSecret(),
  });
  await asSecret.tell('Master', WorkerDecommissioning({ id: target.workerId }));
  // Served after it, in order: by then the forged message was handled (refused).
  const barrier = await asSecret.ask('Master', BoundPortsRequest({}));
  assert.ok(barrier.result, JSON.stringify(barrier));
  await cluster.master.waitForStderr(
    new RegExp(
      `Refused WorkerDecommissioning of ${target.workerId} from .*only ${target.workerId} may send it`,
    ),
  );
  asSecret.close();
  // After the refusals, a state the master pushed since: still ALIVE, still running.
  const s = await cluster.watch.waitFor(() => true);
  assert.equal(s.workers.find((w) => w.id === target.workerId)?.state, 'ALIVE');
  assert.ok(target.isRunning);
});
