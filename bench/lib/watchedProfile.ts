/**
 * Where watching a job costs (issue 27's "watched on ÷ off"): runs the tasks benchmark's watched
 * jobs (wick.ui.reportStatus and an event log on, then both off) on a local cluster, with CPU
 * profiles of the driver (this process, over each measured job) and of the master (from start to
 * exit, cpuProfilePreload.cjs), and prints each profile's top functions by self time, and the
 * driver's CPU µs per task in each mode. Not a benchmark (its figures are a profiled run's).
 *
 *   node --import tsx bench/lib/watchedProfile.ts [--tasks 20000] [--rounds 2] [--dir DIR]
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { setLogLevel } from '../../backend/util/log.js';
import { benchClusterSecret } from './auth.js';
import { stopAll } from './process.js';
import { cpuSeconds } from './procStat.js';
import { connect, executorPids, startCluster } from './wickApp.js';

const { values: opts } = parseArgs({
  options: {
    tasks: { type: 'string', default: '20000' },
    rounds: { type: 'string', default: '2' },
    dir: { type: 'string', default: 'test-output/watched-profile' },
    top: { type: 'string', default: '25' },
    'no-profile': { type: 'boolean', default: false },
  },
  strict: true,
});
const tasks = Number(opts.tasks);
const rounds = Number(opts.rounds);
const dir = resolve(opts.dir ?? 'test-output/watched-profile');
const profiling = !opts['no-profile'];
rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}

/** The top functions of a profile by self time, as "ms  share  name file:line" lines. */
export function topSelf(profile: Profile, top: number): string[] {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    const f = byId.get(id)?.callFrame;
    if (!f) return;
    const file = f.url.replace(/^.*\/(backend|node_modules|bench|dist)\//, '$1/');
    const key = `${f.functionName || '(anonymous)'} ${file}:${f.lineNumber + 1}`;
    self.set(key, (self.get(key) ?? 0) + dt);
    total += dt;
  });
  return [...self.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(
      ([k, us]) =>
        `${(us / 1000).toFixed(1).padStart(8)} ms ${((100 * us) / total).toFixed(1).padStart(5)}%  ${k}`,
    );
}

async function main(): Promise<void> {
  setLogLevel('WARN');
  benchClusterSecret();
  const cluster = await startCluster({
    workers: 2,
    cores: 1,
    env: profiling
      ? {
          NODE_OPTIONS: `--require ${fileURLToPath(new URL('cpuProfilePreload.cjs', import.meta.url))}`,
          WICK_BENCH_PROFILE_DIR: dir,
          WICK_BENCH_PROFILE_MATCH: 'master',
        }
      : {},
  });
  const master = masterPid(cluster.pid);
  const cpu: Record<string, { driver: number[]; master: number[]; executors: number[] }> = {
    on: { driver: [], master: [], executors: [] },
    off: { driver: [], master: [], executors: [] },
  };
  const logDir = mkdtempSync(join(os.tmpdir(), 'wick-watched-profile-'));
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
  try {
    for (let r = 0; r < rounds; r++) {
      for (const mode of r % 2 === 0 ? ['on', 'off'] : ['off', 'on']) {
        const conf: Record<string, string> =
          mode === 'on'
            ? {
                'wick.ui.reportStatus': 'true',
                'wick.eventLog.enabled': 'true',
                'wick.eventLog.dir': logDir,
              }
            : { 'wick.ui.reportStatus': 'false', 'wick.eventLog.enabled': 'false' };
        const app = await connect(cluster.ready.url, `watched-profile-${mode}`, 2, conf);
        try {
          await app.range(0, 2000, 1, 2000).foreach(() => {});
          const exPids = executorPids(app.appId, cluster.pid);
          if (profiling) await session.post('Profiler.start');
          const cpu0 = process.cpuUsage();
          const m0 = cpuSeconds(master);
          const e0 = exPids.map(cpuSeconds);
          const t0 = performance.now();
          await app.range(0, tasks, 1, tasks).foreach(() => {});
          const ms = performance.now() - t0;
          const c = process.cpuUsage(cpu0);
          const us = (s: number) => (s * 1e6) / tasks;
          const k = cpu[mode] as (typeof cpu)['on'];
          k.driver.push((c.user + c.system) / tasks);
          k.master.push(us(cpuSeconds(master) - m0));
          k.executors.push(
            us(exPids.reduce((a, p, i) => a + cpuSeconds(p) - (e0[i] as number), 0)),
          );
          console.log(
            `round ${r + 1} ${mode}: ${Math.round(tasks / (ms / 1000))} tasks/s; CPU µs/task: driver ${k.driver.at(-1)?.toFixed(1)}, master ${k.master.at(-1)?.toFixed(1)}, executors ${k.executors.at(-1)?.toFixed(1)}; load ${os.loadavg()[0]?.toFixed(1)}`,
          );
          if (profiling) {
            const { profile } = await session.post('Profiler.stop');
            writeFileSync(join(dir, `driver-${mode}-${r}.cpuprofile`), JSON.stringify(profile));
            if (r >= rounds - 2)
              console.log(topSelf(profile as unknown as Profile, Number(opts.top)).join('\n'));
          }
        } finally {
          await app.stop();
        }
      }
    }
  } finally {
    session.disconnect();
    await stopAll();
    rmSync(logDir, { recursive: true, force: true });
  }
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
  for (const [mode, k] of Object.entries(cpu)) {
    console.log(
      `${mode}: median CPU µs/task driver ${med(k.driver).toFixed(1)}, master ${med(k.master).toFixed(1)}, executors ${med(k.executors).toFixed(1)}`,
    );
  }
  for (const f of readdirSync(dir).filter((f) => f.startsWith('master'))) {
    const p = JSON.parse(readFileSync(join(dir, f), 'utf8')) as Profile;
    console.log(`\n${f} (whole life):\n${topSelf(p, Number(opts.top)).join('\n')}`);
  }
}

/** The master daemon the cluster server started (its child with `master` in its command). */
function masterPid(clusterPid: number): number {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === clusterPid && argv.includes('master')) return Number(entry);
    } catch {}
  }
  throw new Error(`no master process under ${clusterPid}`);
}

await main();
