import { setLogLevel } from '../backend/util/log.js';
import { stopAll } from './lib/process.js';
import { connect, startCluster, executorPids } from './lib/wickApp.js';
import { cpuSeconds } from './lib/procStat.js';
import os from 'node:os';
setLogLevel('WARN');
const prof = process.env.PROF_DIR;
const c = await startCluster(prof ? { env: { NODE_OPTIONS: `--require ${process.cwd()}/bench/lib/cpuProfilePreload.cjs`, WICK_BENCH_PROFILE_DIR: prof, WICK_BENCH_PROFILE_MATCH: "executor" } } : {});
try {
  const wc = await connect(c.ready.url, 'proto', 2);
  const pids = executorPids(wc.appId);
  const n0 = Number(process.env.N ?? 20000);
  await wc.range(0, 5000, 1, 5000).foreach(() => {});
  const cpu0 = process.cpuUsage();
  const e0 = pids.map(cpuSeconds);
  const t = performance.now();
  await wc.range(0, n0, 1, n0).foreach(() => {});
  const ms = performance.now() - t;
  const cpu = process.cpuUsage(cpu0);
  const e1 = pids.map(cpuSeconds);
  console.log(n0, 'tasks', ms.toFixed(0), 'ms', (n0 / ms * 1000).toFixed(0), '/s', 'driver us/task', ((cpu.user+cpu.system)/n0).toFixed(0), 'executors us/task', e1.map((x, i) => ((x - e0[i]) * 1e6 / n0).toFixed(0)).join(' '), 'load', os.loadavg()[0].toFixed(1));
  await wc.stop();
} finally { await stopAll(); }
