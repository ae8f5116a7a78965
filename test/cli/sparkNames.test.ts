/**
 * Spark's names, as a Spark operator uses them, against real processes: a spark-defaults.conf and
 * `--conf spark.*` taking effect on `wick submit` (the executor memory and cores the master
 * sees), unknown keys warned about once by name, spark:// master URLs, spark-env.sh's
 * SPARK_WORKER_CORES/MEMORY on a worker, `--verbose` saying where each setting came from,
 * `--status`/`--kill` as spark-submit's, and errors without a JavaScript stack unless asked.
 */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { AppDir, appIdIn, type SharedCluster, startSharedCluster } from '../helpers/apps.js';
import { runWick, startWick } from '../helpers/cli.js';
import { startMaster } from '../helpers/cluster.js';
import { unusedPort } from '../helpers/net.js';

let cluster: SharedCluster;
const apps = new AppDir();
/** The cluster's master, as Spark writes it. */
let sparkUrl: string;

before(async () => {
  // Two workers of 1 core: an application without a core limit gets an executor on each.
  cluster = await startSharedCluster({ workers: 2, cores: 1, memory: '3g' });
  sparkUrl = cluster.url.replace(/^wick:/, 'spark:');
});

after(async () => {
  await cluster?.stop();
  apps.remove();
});

const counts = (name: string) => `
import { WickContext } from 'wick';
const wc = await WickContext.create({ appName: '${name}' });
console.log('count', await wc.range(0, 100, 1, 4).count());
await wc.stop();
`;

/** A conf dir holding `files` (name → text), for WICK_CONF_DIR. */
function confDir(name: string, files: Record<string, string>): string {
  const dir = join(apps.path, name);
  mkdirSync(dir);
  for (const [f, text] of Object.entries(files)) writeFileSync(join(dir, f), text);
  return dir;
}

/** The application `wick status --json` lists under `name`, in Spark's /json shape. */
async function sparkJsonApp(name: string): Promise<Record<string, unknown>> {
  const r = await runWick(['status', '--json', '--master', sparkUrl]);
  assert.equal(r.code, 0, r.stderr);
  const json = JSON.parse(r.stdout) as {
    activeapps: Record<string, unknown>[];
    completedapps: Record<string, unknown>[];
  };
  const app = [...json.activeapps, ...json.completedapps].find((a) => a.name === name);
  assert.ok(app, `no application ${name} in:\n${r.stdout}`);
  return app;
}

test('a conf/spark-defaults.conf works as it is: spark.master, spark.executor.memory and spark.cores.max take effect; unknown keys are warned about once; --verbose says where each setting came from', {
  timeout: 90_000,
}, async () => {
  const dir = confDir('spark-conf', {
    'spark-defaults.conf': [
      '# as Spark ships it',
      `spark.master                     ${sparkUrl}`,
      'spark.executor.memory            2g',
      'spark.cores.max                  1',
      'spark.serializer                 org.apache.spark.serializer.KryoSerializer',
    ].join('\n'),
  });
  const r = await runWick(
    [
      'submit',
      '--verbose',
      '--conf',
      'wick.bogus.key=1',
      '--conf',
      'spark.serializer=again',
      apps.write('defaults.ts', counts('spark defaults')),
    ],
    {
      mark: cluster.mark,
      cwd: apps.path,
      env: { WICK_CONF_DIR: dir, SPARK_LOCAL_DIRS: apps.path },
    },
  );
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^count 100$/m);
  const appId = appIdIn(r.stderr);
  assert.ok(appId, r.stderr);

  // Each unknown key is named once, with where it came from (the later source).
  const warned = (key: string) =>
    r.stderr.split('\n').filter((l) => l.includes(`Ignoring unknown configuration key ${key} `));
  assert.equal(warned('wick.bogus.key').length, 1, r.stderr);
  assert.match(warned('wick.bogus.key')[0] ?? '', /WARN .*\(from --conf\)/);
  assert.equal(warned('spark.serializer').length, 1, r.stderr);

  // --verbose: each resolved setting and its origin.
  const file = join(dir, 'spark-defaults.conf');
  const setting = (key: string, value: string, origin: string) =>
    assert.ok(
      r.stderr.includes(`  ${key}=${value}  (${origin})\n`),
      `${key}=${value} from ${origin} in:\n${r.stderr}`,
    );
  setting('wick.master', sparkUrl, `properties file ${file} (as spark.master)`);
  setting('wick.executor.memory', '2g', `properties file ${file} (as spark.executor.memory)`);
  setting('wick.cores.max', '1', `properties file ${file} (as spark.cores.max)`);
  setting('wick.local.dir', apps.path, 'environment variable SPARK_LOCAL_DIRS');
  setting('wick.executor.cores', '0', 'default');
  setting('wick.submit.deployMode', 'client', 'default');

  // The master's view: 2048 MB per executor, one core, so one executor of the two workers.
  const s = await cluster.watch.waitFor((s) => cluster.watch.app(s, appId)?.state === 'FINISHED');
  const app = cluster.watch.app(s, appId);
  assert.equal(app?.memoryPerExecutorMB, 2048);
  assert.equal(app?.removedExecutors.length, 1, JSON.stringify(app?.removedExecutors));
  const json = await sparkJsonApp('spark defaults');
  assert.equal(json.memoryperexecutor, 2048);
  // The cap asked for (Spark 3's `cores` is what is granted now: 0 once it ended).
  assert.deepEqual([json.maxcores, json.cores], [1, 0]);
  await cluster.assertOnlyClusterLeft();

  // spark-submit's --status, against the spark:// URL.
  const status = await runWick(['submit', '--status', appId, '--master', sparkUrl]);
  assert.equal(status.code, 0, status.stderr);
  assert.match(status.stdout, new RegExp(`^${appId}  spark defaults  FINISHED`));
});

test('--conf spark.executor.memory=2g and --master spark://… on the command line: the master sees 2048 MB, over a wick-defaults.conf', {
  timeout: 60_000,
}, async () => {
  const dir = confDir('wick-conf', { 'wick-defaults.conf': 'wick.executor.memory 1g\n' });
  const r = await runWick(
    [
      'submit',
      '--master',
      sparkUrl,
      '--conf',
      'spark.executor.memory=2g',
      apps.write('conf.ts', counts('spark conf')),
    ],
    { mark: cluster.mark, cwd: apps.path, env: { WICK_CONF_DIR: dir } },
  );
  assert.equal(r.code, 0, r.stderr);
  assert.doesNotMatch(r.stderr, / WARN /, 'nothing to warn about');
  const appId = appIdIn(r.stderr) as string;
  const s = await cluster.watch.waitFor((s) => cluster.watch.app(s, appId)?.state === 'FINISHED');
  assert.equal(cluster.watch.app(s, appId)?.memoryPerExecutorMB, 2048);
  // No core limit: an executor on each worker.
  assert.equal(cluster.watch.app(s, appId)?.removedExecutors.length, 2);
  await cluster.assertOnlyClusterLeft();
});

test('errors name the bad value and what was expected, without a JavaScript stack unless asked', {
  timeout: 60_000,
}, async () => {
  const app = apps.write('never.mjs', 'console.log("ran")\n');
  const closed = await unusedPort();
  const reachesNothing = apps.write(
    'reaches-nothing.mjs',
    "import { WickContext } from 'wick';\nawait WickContext.create({ appName: 'x' });\n",
  );
  const stack = /^\s+at /m;
  const cases: [string, string[], RegExp][] = [
    [
      'a master URL Wick does not take',
      ['submit', '--master', 'yarn', app],
      /^wick: Invalid master URL "yarn": "yarn" is not host:port; expected wick:\/\/host:port\[,host:port…\] or spark:\/\/host:port/m,
    ],
    [
      'a spark:// master that does not answer (client mode)',
      ['submit', '--master', `spark://127.0.0.1:${closed}`, reachesNothing],
      /^wick: Cannot reach a master\. Tried:\n {2}wick:\/\/127\.0\.0\.1:\d+: /m,
    ],
    [
      'status',
      ['status', '--master', 'mesos://m:5050'],
      /^wick: Invalid master URL "mesos:\/\/m:5050"/m,
    ],
    [
      'submit --kill of something that is not an id',
      ['submit', '--kill', 'nothing', '--master', sparkUrl],
      /^wick: Cannot kill "nothing": expected an application id \(app-…\) or a driver id \(driver-…\)$/m,
    ],
    [
      'a bad spark.* value',
      ['submit', '--master', sparkUrl, '--conf', 'spark.executor.memory=lots', app],
      /^wick: Invalid value for wick\.executor\.memory: expected a size such as 512k, 512m or 2g, got "lots" \(set by --conf \(as spark\.executor\.memory\)\)$/m,
    ],
  ];
  for (const [what, args, expected] of cases) {
    const r = await runWick(args, { mark: cluster.mark, cwd: apps.path });
    assert.equal(r.code, 1, `${what}: ${r.stderr}`);
    assert.match(r.stderr, expected, what);
    assert.doesNotMatch(r.stderr, stack, `${what}: no stack`);
    assert.doesNotMatch(r.stdout, /ran/, what);
  }
  // Asked for: --verbose or WICK_DEBUG=1 show where it failed.
  const verbose = await runWick(['submit', '--verbose', '--master', 'yarn', app], {
    cwd: apps.path,
  });
  assert.equal(verbose.code, 1);
  assert.match(verbose.stderr, /^wick: Error: Invalid master URL "yarn"/m);
  assert.match(verbose.stderr, stack);
  const debug = await runWick(['status', '--master', 'yarn'], { env: { WICK_DEBUG: '1' } });
  assert.match(debug.stderr, stack);
  await cluster.assertOnlyClusterLeft();
});

test("spark-env.sh's SPARK_WORKER_CORES and SPARK_WORKER_MEMORY size a worker; SPARK_WORKER_INSTANCES is warned about by name", {
  timeout: 60_000,
}, async (t) => {
  const master = await startMaster(t);
  const workDir = join(apps.path, 'spark-env-worker');
  const worker = startWick(
    [
      'worker',
      master.url.replace(/^wick:/, 'spark:'),
      '--host',
      '127.0.0.1',
      '--port',
      '0',
      '--webui-port',
      '0',
      '--work-dir',
      workDir,
      '--print-ready',
      '--exit-with-parent',
    ],
    {
      cwd: apps.path,
      env: { SPARK_WORKER_CORES: '1', SPARK_WORKER_MEMORY: '512m', SPARK_WORKER_INSTANCES: '3' },
    },
  );
  t.after(async () => {
    worker.child.kill('SIGTERM');
    await worker.exited;
  });
  const ready = JSON.parse(await worker.firstLine()) as { workerId: string };
  const r = await runWick(['status', '--json', '--master', master.url.replace(/^wick:/, 'spark:')]);
  assert.equal(r.code, 0, r.stderr);
  const w = (JSON.parse(r.stdout) as { workers: Record<string, unknown>[] }).workers.find(
    (w) => w.id === ready.workerId,
  );
  assert.equal(w?.cores, 1, r.stdout);
  assert.equal(w?.memory, 512, r.stdout);
  const warnings = worker
    .stderr()
    .split('\n')
    .filter((l) => l.includes('SPARK_WORKER_INSTANCES'));
  assert.equal(warnings.length, 1, worker.stderr());
  assert.match(
    warnings[0] ?? '',
    /WARN .*Ignoring environment variable SPARK_WORKER_INSTANCES: Wick has no such setting \(this starts one worker/,
  );
});
