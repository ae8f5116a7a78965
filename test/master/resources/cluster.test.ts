/**
 * Custom resources end to end, with real masters, workers, executors and a driver in this process:
 * workers find their GPUs with discovery scripts the test writes; executors never share an
 * address; a task sees the addresses it holds (wickTaskContext.resources, Spark's
 * TaskContext.resources()); they are free again once the executors exit; an application that
 * needs a GPU waits, saying so, on a cluster without one and runs once a worker with one joins;
 * and a master restarted from FILESYSTEM recovery keeps who holds which address.
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, type TestContext, test } from 'node:test';
import { WickContext } from '../../../backend/app/index.js';
import { type MasterState, MasterWatch } from '../../helpers/apps.js';
import { Daemon, startMaster, startWorker, wick } from '../../helpers/cluster.js';
import { checkNothingLeftRunning } from '../../helpers/leaks.js';
import { uiFetch } from '../../helpers/webUi.js';

checkNothingLeftRunning();

for (const k of ['WICK_MASTER', 'WICK_SUBMIT_CONF', 'WICK_APP_NAME', 'WICK_APP_DIR'])
  delete process.env[k];

const dir = mkdtempSync(join(tmpdir(), 'wick-test-resources-'));
after(() => rmSync(dir, { recursive: true, force: true }));

let scripts = 0;
/** A discovery script that prints Spark's ResourceInformation for `addresses`. */
function gpuScript(addresses: string[]): Record<string, string> {
  const p = join(dir, `gpus-${scripts++}.sh`);
  writeFileSync(p, `#!/bin/sh\necho '${JSON.stringify({ name: 'gpu', addresses })}'\n`);
  chmodSync(p, 0o755);
  return {
    'wick.worker.resource.gpu.amount': String(addresses.length),
    'wick.worker.resource.gpu.discoveryScript': p,
  };
}

async function watch(t: TestContext, url: string): Promise<MasterWatch> {
  const w = await MasterWatch.connect(url);
  t.after(() => w.stop());
  return w;
}

async function context(t: TestContext, url: string, conf: Record<string, string>) {
  const wc = await WickContext.create({ master: url, appName: 'gpu app', conf });
  t.after(() => wc.stop());
  return wc;
}

const appOf = (s: MasterState, id: string) => s.activeApps.find((a) => a.id === id);
const gpusOf = (s: MasterState, id: string) =>
  appOf(s, id)?.executors.map((e) => e.resources?.gpu ?? []) ?? [];

test('executors never share a gpu, each task sees its own, and exits free them', {
  timeout: 120_000,
}, async (t) => {
  const master = await startMaster(t);
  const worker = await startWorker(t, master.url, { cores: 4, conf: gpuScript(['0', '1']) });
  const w = await watch(t, master.url);
  const wc = await context(t, master.url, {
    'spark.executor.resource.gpu.amount': '1',
    'spark.task.resource.gpu.amount': '1',
    'wick.executor.cores': '1',
    // Room for 4 executors by cores: the 2 gpus allow 2.
    'wick.cores.max': '4',
    'wick.executor.memory': '64m',
  });
  const appId = wc.appId;
  let s = await w.waitFor(
    (s) => appOf(s, appId)?.executors.filter((e) => e.state === 'RUNNING').length === 2,
  );
  assert.deepEqual(gpusOf(s, appId).flat().sort(), ['0', '1'], 'one gpu each, none twice');
  const ws = s.workers.find((x) => x.id === worker.workerId);
  assert.deepEqual(ws?.resourcesUsed, { gpu: ['0', '1'] });
  assert.equal(ws?.coresUsed, 2, 'the other 2 cores stay free: no gpu is left for them');
  const reason = appOf(s, appId)?.waitingReason;
  assert.equal(reason, undefined, 'it runs');

  type Json = {
    workers: { id: string; [k: string]: unknown }[];
    resources: unknown;
    activeapps: { id: string; [k: string]: unknown }[];
  };
  const json = (await (await uiFetch(`${master.webUiUrl}/json`)).json()) as Json;
  const wj = json.workers.find((x) => x.id === worker.workerId) ?? ({} as Record<string, unknown>);
  assert.deepEqual(wj.resources, { gpu: { name: 'gpu', addresses: ['0', '1'] } });
  assert.deepEqual(wj.resourcesused, { gpu: { name: 'gpu', addresses: ['0', '1'] } });
  assert.deepEqual(wj.resourcesfree, { gpu: { name: 'gpu', addresses: [] } });
  assert.deepEqual(json.resources, [{ gpu: { name: 'gpu', addresses: ['0', '1'] } }]);
  const aj = json.activeapps.find((a) => a.id === appId) ?? ({} as Record<string, unknown>);
  assert.deepEqual(aj.resourcesperexecutor, [{ name: 'gpu', amount: 1 }]);
  assert.deepEqual(aj.resourcesperslave, [{ name: 'gpu', amount: 1 }]);

  // Each task holds one gpu of its executor's, as its context says.
  const seen = (await wc
    .parallelize([1, 2, 3, 4, 5, 6], 6)
    .map(() => {
      const ctx = (
        globalThis as {
          wickTaskContext?: { resources: Record<string, { name: string; addresses: string[] }> };
        }
      ).wickTaskContext;
      return ctx?.resources.gpu ?? null;
    })
    .collect()) as ({ name: string; addresses: string[] } | null)[];
  assert.equal(seen.length, 6);
  for (const r of seen) {
    assert.equal(r?.name, 'gpu');
    assert.equal(r?.addresses.length, 1);
    assert.ok(['0', '1'].includes(r?.addresses[0] as string), JSON.stringify(r));
  }

  await wc.stop();
  s = await w.waitFor((s) => s.completedApps.some((a) => a.id === appId));
  s = await w.waitFor(
    (s) => s.workers.find((x) => x.id === worker.workerId)?.resourcesUsed?.gpu?.length === 0,
  );
  assert.deepEqual(s.workers.find((x) => x.id === worker.workerId)?.resources, {
    gpu: ['0', '1'],
  });
});

test('an app needing a gpu waits on a cluster without one, saying so, then runs on a worker that has one', {
  timeout: 120_000,
}, async (t) => {
  const master = await startMaster(t);
  await startWorker(t, master.url, { cores: 2 });
  const w = await watch(t, master.url);
  const wc = await context(t, master.url, {
    'wick.executor.resource.gpu.amount': '1',
    'wick.executor.memory': '64m',
  });
  const appId = wc.appId;
  let s = await w.waitFor((s) => /gpu/.test(appOf(s, appId)?.waitingReason ?? ''));
  assert.match(
    appOf(s, appId)?.waitingReason ?? '',
    /each executor asks for 1 gpu but no alive worker has 1 gpu/,
  );
  assert.equal(appOf(s, appId)?.state, 'WAITING');
  assert.deepEqual(appOf(s, appId)?.executors, [], 'no executor on the worker without a gpu');

  const gpuWorker = await startWorker(t, master.url, { cores: 1, conf: gpuScript(['7']) });
  s = await w.waitFor((s) => appOf(s, appId)?.executors[0]?.state === 'RUNNING');
  const exec = appOf(s, appId)?.executors[0];
  assert.equal(exec?.workerId, gpuWorker.workerId);
  assert.deepEqual(exec?.resources, { gpu: ['7'] });
  assert.equal(appOf(s, appId)?.executors.length, 1);
  assert.equal(await wc.parallelize([1, 2, 3], 3).count(), 3);
});

test('after a master restart (FILESYSTEM recovery) each executor keeps its gpu, and a new one gets another', {
  timeout: 150_000,
}, async (t) => {
  const recovery = mkdtempSync(join(dir, 'recovery-'));
  t.after(async () => {
    await Promise.all(Daemon.running().map((d) => d.stop()));
  });
  const conf = {
    'wick.deploy.recoveryMode': 'FILESYSTEM',
    'wick.deploy.recoveryDirectory': recovery,
    'wick.worker.timeout': '60s',
  };
  const first = await startMaster(t, { conf });
  const worker = await startWorker(t, first.url, { cores: 2, conf: gpuScript(['0', '1']) });
  const appConf = {
    'wick.executor.resource.gpu.amount': '1',
    'wick.executor.memory': '64m',
    'wick.cores.max': '1',
  };
  const one = await context(t, first.url, appConf);
  const oneId = one.appId;
  const w1 = await watch(t, first.url);
  await w1.waitFor((s) => appOf(s, oneId)?.executors[0]?.state === 'RUNNING');
  await w1.stop();

  await first.kill('SIGKILL');
  const second = await startMaster(t, { port: first.port, conf });
  const w = await watch(t, second.url);
  let s = await w.waitFor(
    (s) =>
      s.status === 'ALIVE' &&
      s.workers.find((x) => x.id === worker.workerId)?.state === 'ALIVE' &&
      appOf(s, oneId)?.state === 'RUNNING',
  );
  assert.deepEqual(gpusOf(s, oneId), [['0']], 'the recovered executor holds its gpu');
  assert.deepEqual(s.workers.find((x) => x.id === worker.workerId)?.resourcesUsed, {
    gpu: ['0'],
  });

  // A second application gets the other gpu, not the one the recovered executor holds.
  const two = await context(t, second.url, appConf);
  const twoId = two.appId;
  s = await w.waitFor((s) => appOf(s, twoId)?.executors[0]?.state === 'RUNNING');
  assert.deepEqual(gpusOf(s, twoId), [['1']]);
  assert.equal(await one.parallelize([1, 2], 2).count(), 2);
});

test('a worker whose discovery script prints something else does not start, naming the script', {
  timeout: 60_000,
}, async () => {
  const script = join(dir, 'bad.sh');
  writeFileSync(script, '#!/bin/sh\necho gpu0 gpu1\n');
  chmodSync(script, 0o755);
  const r = await wick([
    'worker',
    'wick://127.0.0.1:1',
    '--work-dir',
    join(dir, 'bad-worker'),
    '--conf',
    'wick.worker.resource.gpu.amount=1',
    '--conf',
    `spark.worker.resource.gpu.discoveryScript=${script}`,
  ]);
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, new RegExp(`The discovery script ${script} for resource gpu`));
  assert.match(r.stderr, /printed 'gpu0 gpu1', which is not JSON; expected one JSON object/);
  assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
});
