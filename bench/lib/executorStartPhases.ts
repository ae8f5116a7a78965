/**
 * Phases of an executor's start-up (issue 31), from bench/lib/startupProbe.cjs's stamps: a
 * cluster of a master and one worker × 1 core (wick.executor.sandbox as on this machine: auto),
 * `wick submit examples/pi.ts 2` run after run, and for the first executor of each: the worker's
 * spawn, bwrap until Node starts, Node's boot, the bundle's load and compile, the command until it
 * connects to its driver, and until it registered; with its CPU times. An executor that was the
 * worker's standby has no spawn on its path: its start happened before, and its stamps up to
 * "connecting" include its wait for the launch (only "added → driver saw it registered" is on
 * the path). Medians; not a benchmark
 * of its own (no goal), a tool to find where start-up time goes.
 *
 *   node --import tsx bench/lib/executorStartPhases.ts [runs] [key=value conf for the daemons...]
 *   e.g. … 5 wick.worker.executor.prestart=false   (fresh executors; WICK_COMPILE_CACHE=off: no cache)
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stopAll } from './process.js';
import { median } from './stats.js';
import { startCluster, waitForIdleCluster } from './wickApp.js';

type Probe = Record<string, number | string | boolean | undefined>;
const root = fileURLToPath(new URL('../..', import.meta.url));
const runs = Number(process.argv[2] ?? 5);
if (!Number.isInteger(runs) || runs < 1 || runs > 100) {
  throw new Error(`runs must be a whole number from 1 to 100, got "${process.argv[2]}"`);
}
const env = {
  NODE_OPTIONS: `--require ${join(root, 'bench/lib/startupProbe.cjs')}`,
  WICK_LOG_LEVEL: 'INFO',
  WICK_BENCH_KEEP_CLUSTER_DIR: '1',
};
const probes = (text: string): Probe[] =>
  text
    .split('\n')
    .filter((l) => l.startsWith('PROBE '))
    .map((l) => JSON.parse(l.slice(6)) as Probe);
const n = (p: Probe, k: string) => p[k] as number;

const cluster = await startCluster({ workers: 1, cores: 1, env, conf: process.argv.slice(3) });
const rows: Record<string, number>[] = [];
try {
  // The first run warms the OS's file cache; it is not counted.
  for (let r = 0; r <= runs; r++) {
    await waitForIdleCluster(cluster.ready.url);
    const t0 = performance.timeOrigin + performance.now();
    const submit = spawnSync(
      process.execPath,
      [join(root, 'bin/wick.js'), 'submit', '--master', cluster.ready.url, 'examples/pi.ts', '2'],
      { cwd: root, env: { ...process.env, ...env }, encoding: 'utf8' },
    );
    const driver = probes(submit.stderr).find((p) => p.event === 'driverRegistered');
    const appId = /app-\d+-\d+/.exec(submit.stderr)?.[0];
    if (!driver || !appId) throw new Error(`no driver probe:\n${submit.stderr.slice(-2000)}`);
    const workerLog = readdirSync(cluster.ready.logDir)
      .filter((f) => f.startsWith('worker'))
      .map((f) => readFileSync(join(cluster.ready.logDir, f), 'utf8'))
      .join('\n');
    const spawn = probes(workerLog).find((p) => p.event === 'spawn' && p.appId === appId);
    const execDir = join(cluster.ready.workDir, appId);
    const [execId] = readdirSync(execDir);
    const stderr = readFileSync(join(execDir, execId as string, 'stderr'), 'utf8');
    const ex = probes(stderr).find((p) => p.event === 'registered');
    if (!ex) throw new Error(`no executor probe in ${execDir}`);
    const row: Record<string, number> = {
      'submit → executor added': n(driver, 'added') - t0,
      'added → spawn (worker)': spawn ? n(spawn, 'at') - n(driver, 'added') : Number.NaN,
      'spawn call': spawn ? n(spawn, 'after') - n(spawn, 'at') : Number.NaN,
      'spawn → Node starts (bwrap)': spawn ? n(ex, 'timeOrigin') - n(spawn, 'at') : Number.NaN,
      'Node boot': n(ex, 'preload') - n(ex, 'timeOrigin'),
      'bundle read': n(ex, 'compileStart') - n(ex, 'preload'),
      'bundle compile': n(ex, 'compileEnd') - n(ex, 'compileStart'),
      '→ connecting to driver': n(ex, 'connecting') - n(ex, 'compileEnd'),
      '→ registered': n(ex, 'registered') - n(ex, 'connecting'),
      'added → driver saw it registered': n(driver, 'driverRegistered') - n(driver, 'added'),
      'submit → driver saw it registered': n(driver, 'driverRegistered') - t0,
      'CPU: to compile': n(ex, 'cpuCompileStart'),
      'CPU: compile': n(ex, 'cpuCompileEnd') - n(ex, 'cpuCompileStart'),
      'CPU: → connecting': n(ex, 'cpu_connecting') - n(ex, 'cpuCompileEnd'),
      'CPU: → registered': n(ex, 'cpu_registered') - n(ex, 'cpu_connecting'),
      'code cache used': ex.hadCache && ex.cacheRejected === false ? 1 : 0,
      'was the standby': spawn ? 0 : 1,
    };
    if (r > 0) rows.push(row);
  }
  console.log(`${runs} runs, medians (ms); load ${readFileSync('/proc/loadavg', 'utf8').trim()}`);
  for (const k of Object.keys(rows[0] ?? {}))
    console.log(`  ${k.padEnd(36)} ${median(rows.map((x) => x[k] as number)).toFixed(1)}`);
} finally {
  await stopAll();
}
