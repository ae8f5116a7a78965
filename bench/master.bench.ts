/**
 * Benchmark `master`: what a Master costs with many workers, and how fast it schedules.
 *
 * 1. Heartbeats. A real Master (startMaster, bench/lib/masterServer.ts) runs alone in its own
 *    process. N simulated workers (bench/lib/simWorkers.ts, spread over a few processes) are each
 *    their own listening RpcEnv on loopback with their own TCP connection to the master, as real
 *    workers are: they register, then send a Heartbeat every second, the N heartbeats spread evenly
 *    over the second. After a warm-up, over a measured window:
 *
 *    - cpuShare: the master process's CPU time (utime + stime of all its threads, from
 *      /proc/PID/stat) ÷ the window's wall time. 1.0 = one core busy all the time.
 *    - lag: round trips of BoundPortsRequest asks that this (otherwise idle) benchmark process
 *      sends the master at --probe-hz during the window. The Master endpoint handles its messages
 *      one at a time in arrival order, heartbeats and asks alike, so a probe's round trip bounds
 *      from above how long a message arriving at that moment waits before the master has handled
 *      it (it adds a loopback round trip and the probe's own reply). lagP99 is its 99th
 *      percentile. For context, "in-band" round trips are also shown: asks sent by simulated
 *      workers right after their heartbeat on the same connection, which also include the
 *      simulator processes' own event-loop delays.
 *    - baseline, the floor: the same simulators against bench/lib/rawMaster.ts, the least a master
 *      written directly on node:net does for the same wire protocol (one JSON.parse per line, a Map
 *      of heartbeat times, nothing else), measured the same way right after. Its CPU share is what
 *      one TCP connection per worker costs in Node at all; cpuShareVsRaw is Wick's over it. Most
 *      of that floor is below JavaScript (the kernel's wake-up, epoll and read per message, and
 *      Node's per-read buffer and stream machinery): the `heartbeat` benchmark measures Wick's own
 *      receive path against the same floor in one process, where machine load cancels out.
 *    - baseline, idle: the master's CPU share over a window with the same N workers connected but
 *      not heartbeating (timers, the web UI).
 *
 *    The simulators' heartbeat send lateness is reported, so that a run where the simulators could
 *    not keep up (and so loaded the master less than intended) shows it. After the window the
 *    master's state is checked: every worker ALIVE with a recent heartbeat.
 *
 * 2. schedule(): one call of the pure schedule() of backend/master/scheduling.ts for 1,000 waiting
 *    apps × 10,000 workers (bench/lib/naiveSchedule.ts describes the input), median of several
 *    runs, against Spark's algorithm written naively (filter and sort every worker for every app)
 *    on the same input, with the results checked to be equal.
 *
 * Writes bench/results/master.json. Goals: cpuShareAt10k ≤ 0.10, lagP99MsAt10k ≤ 10 ms,
 * scheduleMs ≤ 50 ms.
 *
 *   npm run bench -- master [--workers 1000,10000] [--processes 4] [--warmup 5] [--window 15]
 *                           [--idle-window 5] [--probe-hz 100] [--probe-every 100]
 *                           [--schedule-runs 9] [--naive-runs 3] [--skip-schedule]
 *                           [--skip-cluster] [--skip-raw] [--profile DIR]
 *
 * One simulated worker holds two sockets (its listener and its connection) and two local ports, the
 * master one socket per worker: the benchmark checks `ulimit -n` and the local port range first.
 * The simulators share the machine with the master: on a small machine their CPU (shown) and any
 * other load (the load average is printed) show in the latencies.
 *
 * --profile DIR writes CPU profiles of the master (node:inspector) into DIR: one of the
 * registrations and one of the measured window. The profiler costs CPU too: figures from a profiled
 * run are not comparable with others.
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { schedule } from '../backend/master/scheduling.js';
import { BoundPortsRequest } from '../backend/protocol/deploy.js';
import { wickProtocol } from '../backend/protocol/index.js';
import { RequestMasterState } from '../backend/protocol/state.js';
import { RpcEnv } from '../backend/rpc/index.js';
import { setLogLevel } from '../backend/util/log.js';
import { int, sized } from './lib/args.js';
import { Control } from './lib/control.js';
import type { Goal } from './lib/goals.js';
import {
  firstDifference,
  naiveScheduleExecutors,
  type ScheduleWorkload,
  scheduleWorkload,
} from './lib/naiveSchedule.js';
import { type ServerProcess, startServer } from './lib/process.js';
import {
  cpuSeconds,
  cpuTimes,
  ephemeralPorts,
  machineLoad,
  openFilesLimit,
  rssMB,
} from './lib/procStat.js';
import { writeResults } from './lib/results.js';
import { runBenchmark } from './lib/run.js';
import { median, percentile, round } from './lib/stats.js';
import { fmt, printTable } from './lib/table.js';

const GOAL_CPU_SHARE = 0.1;
const GOAL_LAG_P99_MS = 10;
const GOAL_SCHEDULE_MS = 50;

const AT_10K = 'measured with 10,000 workers only (npm run bench -- master; smoke runs use 20)';
const goals: Goal[] = [
  {
    figure: 'figures.scheduleMs',
    op: '<=',
    value: GOAL_SCHEDULE_MS,
    what: 'schedule() ms',
    optional: 'not measured with --skip-schedule',
  },
  {
    figure: 'figures.cpuShareAt10k',
    op: '<=',
    value: GOAL_CPU_SHARE,
    what: 'master CPU share, 10k workers',
    optional: AT_10K,
  },
  {
    figure: 'figures.lagP99MsAt10k',
    op: '<=',
    value: GOAL_LAG_P99_MS,
    what: 'master lag p99 (ms), 10k workers',
    optional: AT_10K,
  },
];
const WATCHDOG_MS = 30 * 60_000;
/** File descriptors a process needs beyond its sockets (stdio, epoll, the module loader...). */
const FD_MARGIN = 200;

const { values: opts } = parseArgs({
  options: {
    workers: { type: 'string', default: sized('1000,10000', '20') },
    processes: { type: 'string', default: sized('4', '1') },
    warmup: { type: 'string', default: sized('5', '0') },
    window: { type: 'string', default: sized('15', '1') },
    'idle-window': { type: 'string', default: sized('5', '1') },
    'probe-hz': { type: 'string', default: '100' },
    'probe-every': { type: 'string', default: '100' },
    'schedule-runs': { type: 'string', default: sized('9', '1') },
    'naive-runs': { type: 'string', default: sized('3', '1') },
    'skip-schedule': { type: 'boolean', default: false },
    'skip-cluster': { type: 'boolean', default: false },
    'skip-raw': { type: 'boolean', default: false },
    profile: { type: 'string' },
  },
  strict: true,
});

const workerCounts = (opts.workers ?? '')
  .split(',')
  .map((s) => int('workers', s.trim(), 1, 50_000))
  .sort((a, b) => a - b);
const processes = int('processes', opts.processes, 1, 64);
const warmupS = int('warmup', opts.warmup, 0, 600);
const windowS = int('window', opts.window, 1, 600);
const idleWindowS = int('idle-window', opts['idle-window'], 0, 600);
const probeHz = int('probe-hz', opts['probe-hz'], 1, 1000);
const probeEvery = int('probe-every', opts['probe-every'], 0, 1_000_000);
const scheduleRuns = int('schedule-runs', opts['schedule-runs'], 1, 100);
const naiveRuns = int('naive-runs', opts['naive-runs'], 1, 100);

/** schedule()'s input: waiting apps × workers, and × fewer workers (smoke mode: tiny). */
const scheduleApps = Number(sized('1000', '20'));
const scheduleWorkers = Number(sized('10000', '200'));
const scheduleWorkersSmall = Number(sized('1000', '50'));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const wallNow = () => performance.timeOrigin + performance.now();

/** "10k" for 10,000, "1k" for 1,000, else the number. */
function label(n: number): string {
  return n % 1000 === 0 ? `${n / 1000}k` : String(n);
}

// schedule() ------------------------------------------------------------------------------------

interface ScheduleFigures {
  ms: number;
  naiveMs: number;
  executors: number;
  runs: number[];
  naive: number[];
}

function measureSchedule(w: ScheduleWorkload, spreadOut: boolean, runs: number): ScheduleFigures {
  const fast = () =>
    schedule({ drivers: [], apps: w.apps, workers: w.workers, spreadOut, random: Math.random })
      .executors;
  const naive = () => naiveScheduleExecutors({ apps: w.apps, workers: w.workers, spreadOut });
  const a = fast();
  const b = naive();
  const diff = firstDifference(a, b);
  if (diff !== undefined) {
    throw new Error(`schedule() and the naive baseline disagree (spreadOut=${spreadOut}): ${diff}`);
  }
  // Warm up the JIT on both before timing.
  for (let i = 0; i < 3; i++) fast();
  const times: number[] = [];
  const naiveTimes: number[] = [];
  const time = (fn: () => unknown) => {
    const t0 = performance.now();
    fn();
    return performance.now() - t0;
  };
  // Interleaved: the naive runs are spread among the fast ones.
  const every = Math.max(1, Math.floor(runs / naiveRuns));
  for (let i = 0; i < runs; i++) {
    times.push(time(fast));
    if (naiveTimes.length < naiveRuns && i % every === 0) naiveTimes.push(time(naive));
  }
  while (naiveTimes.length < naiveRuns) naiveTimes.push(time(naive));
  return {
    ms: median(times),
    naiveMs: median(naiveTimes),
    executors: a.length,
    runs: times,
    naive: naiveTimes,
  };
}

// The cluster -------------------------------------------------------------------------------------

interface SimStats {
  sent: number;
  askFailures: number;
  latenessMs: { n: number; p50: number; p99: number; max: number };
  rttMs: number[];
  memoryMB: number;
}

interface ClusterFigures {
  n: number;
  registerS: number;
  idleCpuShare: number;
  cpuShare: number;
  /** The part of cpuShare spent in the kernel (stime). */
  systemShare: number;
  heartbeatsPerS: number;
  lagP50Ms: number;
  lagP99Ms: number;
  lagMaxMs: number;
  probes: number;
  inbandP50Ms: number;
  inbandP99Ms: number;
  inbandProbes: number;
  latenessP99Ms: number;
  latenessMaxMs: number;
  simCpuShare: number;
  masterRssMB: number;
  staleWorkers: number;
}

function checkLimits(n: number): void {
  const perProcess = Math.ceil(n / processes);
  const fds = openFilesLimit();
  // The master holds one socket per worker; a simulator two per worker (listener + connection).
  const need = Math.max(n, 2 * perProcess) + FD_MARGIN;
  if (fds < need) {
    throw new Error(
      `${n} workers need about ${need} open files per process but the limit is ${fds} (ulimit -n); ` +
        `raise it (ulimit -n ${need}), use more --processes, or lower --workers`,
    );
  }
  const ports = ephemeralPorts();
  if (ports < 2 * n + 1000) {
    throw new Error(
      `${n} workers need about ${2 * n} local ports (a listener and a connection each) but only ${ports} are available (net.ipv4.ip_local_port_range); lower --workers`,
    );
  }
}

/** The Wick master, or the floor: a minimal master on bare node:net (bench/lib/rawMaster.ts). */
type MasterKind = 'wick' | 'raw';

async function measureCluster(n: number, kind: MasterKind): Promise<ClusterFigures> {
  checkLimits(n);
  const env = { WICK_LOG_LEVEL: 'WARN' };
  const master = await startServer<{ address: string; pid: number }>(
    kind === 'wick' ? 'bench/lib/masterServer.ts' : 'bench/lib/rawMaster.ts',
    { env },
  );
  const masterControl = new Control(master as ServerProcess<unknown>, 'master');
  const profileDir = opts.profile && kind === 'wick' ? resolve(opts.profile) : undefined;
  if (profileDir) mkdirSync(profileDir, { recursive: true });
  const profile = async (phase: string, run: () => Promise<void>) => {
    if (!profileDir) return run();
    await masterControl.request({ cmd: 'profile-start' });
    await run();
    const file = join(profileDir, `master-${phase}-${n}.cpuprofile`);
    await masterControl.request({ cmd: 'profile-stop', file });
    console.log(`  profile of the master (${phase}): ${file}`);
  };
  const sims: { server: ServerProcess<unknown>; control: Control; count: number }[] = [];
  const probeEnv = await RpcEnv.create({
    protocol: wickProtocol,
    name: 'benchProbe',
    clientMode: true,
  });
  try {
    const base = Math.floor(n / processes);
    const counts = Array.from({ length: processes }, (_, i) => base + (i < n % processes ? 1 : 0));
    for (const [slot, count] of counts.entries()) {
      if (count === 0) continue;
      const server = await startServer<unknown>('bench/lib/simWorkers.ts', {
        args: [master.ready.address, String(count), String(slot), String(processes), String(n)],
        env,
      });
      sims.push({ server, control: new Control(server, `simWorkers ${slot}`), count });
    }
    const ref = await probeEnv.setupEndpointRef(master.ready.address, 'Master');
    // The master's own view of the workers (the raw floor keeps none: each simulated worker has
    // had its RegisteredWorker, which is all it can show).
    const masterWorkers = async () =>
      kind === 'wick' ? (await ref.ask(RequestMasterState({}))).workers : [];

    // Register every worker.
    const t0 = performance.now();
    await profile('register', async () => {
      await Promise.all(
        sims.map((s) => s.control.request({ cmd: 'register', concurrency: 32 }, 20 * 60_000)),
      );
    });
    const registerS = (performance.now() - t0) / 1000;
    if (kind === 'wick') {
      const alive = (await masterWorkers()).filter((w) => w.state === 'ALIVE').length;
      if (alive !== n) throw new Error(`${alive} workers ALIVE at the master, not ${n}`);
    }
    console.log(`  ${kind}: ${fmt(n)} workers registered in ${fmt(registerS, 1)} s`);

    // Idle: connected, not heartbeating.
    await sleep(1000);
    let idleCpuShare = Number.NaN;
    if (idleWindowS > 0) {
      const c0 = cpuSeconds(master.pid);
      const w0 = performance.now();
      await sleep(idleWindowS * 1000);
      idleCpuShare = (cpuSeconds(master.pid) - c0) / ((performance.now() - w0) / 1000);
    }

    // Heartbeats, with probes from here.
    const startAt = wallNow() + 500;
    await Promise.all(
      sims.map((s) => s.control.request({ cmd: 'start', startAt, probeEvery: probeEvery })),
    );
    const probes: number[] = [];
    let recording = false;
    let probing = true;
    let probeFailures = 0;
    const probeLoop = (async () => {
      const interval = 1000 / probeHz;
      let next = performance.now();
      while (probing) {
        next += interval;
        const t = performance.now();
        try {
          await ref.ask(BoundPortsRequest({}), { timeout: 30_000 });
          if (recording) probes.push(performance.now() - t);
        } catch {
          if (recording) probeFailures++;
        }
        const wait = next - performance.now();
        if (wait > 0) await sleep(wait);
        else next = performance.now();
      }
    })();

    await sleep(500 + warmupS * 1000);
    await Promise.all(sims.map((s) => s.control.request({ cmd: 'stats' })));
    const simCpu0 = sims.reduce((sum, s) => sum + cpuSeconds(s.server.pid), 0);
    const c0 = cpuSeconds(master.pid);
    const sys0 = cpuTimes(master.pid).system;
    const w0 = performance.now();
    recording = true;
    let sys1 = 0;
    let c1 = 0;
    let wallS = 0;
    let simCpu1 = 0;
    await profile('heartbeat', async () => {
      await sleep(windowS * 1000);
      recording = false;
      c1 = cpuSeconds(master.pid);
      sys1 = cpuTimes(master.pid).system;
      wallS = (performance.now() - w0) / 1000;
      simCpu1 = sims.reduce((sum, s) => sum + cpuSeconds(s.server.pid), 0);
    });
    const stats = await Promise.all(sims.map((s) => s.control.request<SimStats>({ cmd: 'stats' })));
    probing = false;
    await probeLoop;
    await Promise.all(sims.map((s) => s.control.request({ cmd: 'halt' })));
    const masterRssMB = rssMB(master.pid);

    // Every worker must still be ALIVE, with a heartbeat in the last few seconds.
    const now = Date.now();
    const stale = (await masterWorkers()).filter(
      (w) => w.state !== 'ALIVE' || now - w.lastHeartbeat > 3000,
    ).length;

    if (probeFailures > 0) throw new Error(`${probeFailures} probe asks failed`);
    const askFailures = stats.reduce((s, x) => s + x.askFailures, 0);
    if (askFailures > 0) throw new Error(`${askFailures} in-band asks failed`);
    const lag = probes.sort((a, b) => a - b);
    const inband = stats.flatMap((s) => s.rttMs).sort((a, b) => a - b);
    const sent = stats.reduce((s, x) => s + x.sent, 0);
    return {
      n,
      registerS,
      idleCpuShare,
      cpuShare: (c1 - c0) / wallS,
      systemShare: (sys1 - sys0) / wallS,
      heartbeatsPerS: sent / wallS,
      lagP50Ms: percentile(lag, 50),
      lagP99Ms: percentile(lag, 99),
      lagMaxMs: lag[lag.length - 1] as number,
      probes: lag.length,
      inbandP50Ms: inband.length ? percentile(inband, 50) : Number.NaN,
      inbandP99Ms: inband.length ? percentile(inband, 99) : Number.NaN,
      inbandProbes: inband.length,
      latenessP99Ms: Math.max(...stats.map((s) => s.latenessMs.p99)),
      latenessMaxMs: Math.max(...stats.map((s) => s.latenessMs.max)),
      simCpuShare: (simCpu1 - simCpu0) / wallS,
      masterRssMB,
      staleWorkers: stale,
    };
  } finally {
    await probeEnv.stop();
    // The master first: then its connections close on its side, and the simulators' ports are not
    // left in TIME_WAIT for the next run.
    await master.stop();
    await Promise.all(sims.map((s) => s.server.stop()));
  }
}

// Main --------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  setLogLevel('WARN');
  const figures: Record<string, number> = {};
  const baseline: Record<string, number> = {};
  const ratios: Record<string, number> = {};
  const verdicts: [string, number, string, boolean][] = [];

  if (!opts['skip-schedule']) {
    console.log(
      `master: schedule() for ${fmt(scheduleApps)} waiting apps × ${fmt(scheduleWorkers)} workers (and × ${fmt(scheduleWorkersSmall)}), ${scheduleRuns} runs, naive baseline ${naiveRuns} runs (${machineLoad()})`,
    );
    const big = scheduleWorkload(scheduleApps, scheduleWorkers);
    const small = scheduleWorkload(scheduleApps, scheduleWorkersSmall);
    const spread = measureSchedule(big, true, scheduleRuns);
    const packed = measureSchedule(big, false, scheduleRuns);
    const spreadSmall = measureSchedule(small, true, scheduleRuns);
    figures.scheduleMs = round(spread.ms, 2);
    figures.scheduleMsPacked = round(packed.ms, 2);
    figures.scheduleMsAt1kWorkers = round(spreadSmall.ms, 2);
    baseline.naiveScheduleMs = round(spread.naiveMs, 1);
    baseline.naiveScheduleMsPacked = round(packed.naiveMs, 1);
    baseline.naiveScheduleMsAt1kWorkers = round(spreadSmall.naiveMs, 1);
    ratios.scheduleVsNaive = round(spread.ms / spread.naiveMs, 4);
    ratios.scheduleVsNaivePacked = round(packed.ms / packed.naiveMs, 4);
    printTable(
      `schedule() — ${fmt(scheduleApps)} waiting apps (${fmt(big.coresWanted)} cores wanted); median of ${scheduleRuns} runs (naive: ${naiveRuns})`,
      ['', 'schedule() ms', 'naive ms', 'ratio', 'executors', 'all runs (ms)'],
      [
        [
          `${fmt(scheduleWorkers)} workers, spread out`,
          fmt(spread.ms, 1),
          fmt(spread.naiveMs, 0),
          (spread.ms / spread.naiveMs).toFixed(4),
          fmt(spread.executors),
          spread.runs.map((t) => t.toFixed(0)).join(' '),
        ],
        [
          `${fmt(scheduleWorkers)} workers, packed`,
          fmt(packed.ms, 1),
          fmt(packed.naiveMs, 0),
          (packed.ms / packed.naiveMs).toFixed(4),
          fmt(packed.executors),
          packed.runs.map((t) => t.toFixed(0)).join(' '),
        ],
        [
          `${fmt(scheduleWorkersSmall)} workers, spread out`,
          fmt(spreadSmall.ms, 1),
          fmt(spreadSmall.naiveMs, 0),
          (spreadSmall.ms / spreadSmall.naiveMs).toFixed(4),
          fmt(spreadSmall.executors),
          spreadSmall.runs.map((t) => t.toFixed(0)).join(' '),
        ],
      ],
    );
    verdicts.push([
      'scheduleMs',
      spread.ms,
      `≤ ${GOAL_SCHEDULE_MS}`,
      spread.ms <= GOAL_SCHEDULE_MS,
    ]);
  }

  if (!opts['skip-cluster']) {
    const columns: { title: string; r: ClusterFigures }[] = [];
    for (const n of workerCounts) {
      console.log(
        `\nmaster: ${fmt(n)} simulated workers in ${processes} processes, heartbeats at 1 Hz; warm-up ${warmupS} s, window ${windowS} s, probes at ${probeHz} Hz (${machineLoad()})`,
      );
      const r = await measureCluster(n, 'wick');
      if (r.staleWorkers > 0) {
        throw new Error(`${r.staleWorkers} of ${n} workers were not ALIVE with a recent heartbeat`);
      }
      columns.push({ title: `Wick, ${fmt(n)}`, r });
      const k = label(n);
      figures[`cpuShareAt${k}`] = round(r.cpuShare, 4);
      figures[`lagP99MsAt${k}`] = round(r.lagP99Ms, 2);
      figures[`lagP50MsAt${k}`] = round(r.lagP50Ms, 2);
      figures[`inbandLagP99MsAt${k}`] = round(r.inbandP99Ms, 2);
      figures[`heartbeatsPerSecAt${k}`] = Math.round(r.heartbeatsPerS);
      figures[`registerSecondsAt${k}`] = round(r.registerS, 2);
      figures[`masterRssMBAt${k}`] = Math.round(r.masterRssMB);
      baseline[`cpuShareIdleAt${k}`] = round(r.idleCpuShare, 4);
      if (!opts['skip-raw']) {
        const raw = await measureCluster(n, 'raw');
        columns.push({ title: `raw floor, ${fmt(n)}`, r: raw });
        baseline[`rawCpuShareAt${k}`] = round(raw.cpuShare, 4);
        baseline[`rawLagP99MsAt${k}`] = round(raw.lagP99Ms, 2);
        ratios[`cpuShareVsRawAt${k}`] = round(r.cpuShare / raw.cpuShare, 3);
      }
      if (n === 10_000) {
        verdicts.push([
          'cpuShareAt10k',
          r.cpuShare,
          `≤ ${GOAL_CPU_SHARE}`,
          r.cpuShare <= GOAL_CPU_SHARE,
        ]);
        verdicts.push([
          'lagP99MsAt10k',
          r.lagP99Ms,
          `≤ ${GOAL_LAG_P99_MS}`,
          r.lagP99Ms <= GOAL_LAG_P99_MS,
        ]);
      }
    }
    const row = (name: string, f: (r: ClusterFigures) => string) => [
      name,
      ...columns.map((c) => f(c.r)),
    ];
    printTable(
      `Master under heartbeats at 1 Hz — window ${windowS} s after ${warmupS} s of warm-up (raw floor: bench/lib/rawMaster.ts)`,
      ['', ...columns.map((c) => c.title)],
      [
        row('master CPU share, heartbeating', (r) => r.cpuShare.toFixed(4)),
        row('  of which in the kernel (stime)', (r) => r.systemShare.toFixed(4)),
        row('master CPU share, idle', (r) => r.idleCpuShare.toFixed(4)),
        row('heartbeats/s sent', (r) => fmt(r.heartbeatsPerS)),
        row('µs of master CPU per heartbeat', (r) => fmt((r.cpuShare * 1e6) / r.heartbeatsPerS, 1)),
        row('probe round trip p50 (ms)', (r) => fmt(r.lagP50Ms, 2)),
        row('probe round trip p99 (ms) = lag', (r) => fmt(r.lagP99Ms, 2)),
        row('probe round trip max (ms)', (r) => fmt(r.lagMaxMs, 2)),
        row('probes', (r) => fmt(r.probes)),
        row('in-band round trip p50 (ms)', (r) => fmt(r.inbandP50Ms, 2)),
        row('in-band round trip p99 (ms)', (r) => fmt(r.inbandP99Ms, 2)),
        row('in-band probes', (r) => fmt(r.inbandProbes)),
        row('simulators: send lateness p99 (ms)', (r) => fmt(r.latenessP99Ms, 1)),
        row('simulators: send lateness max (ms)', (r) => fmt(r.latenessMaxMs, 1)),
        row('simulators: CPU share, together', (r) => r.simCpuShare.toFixed(3)),
        row('registering every worker (s)', (r) => fmt(r.registerS, 1)),
        row('master RSS (MiB)', (r) => fmt(r.masterRssMB)),
      ],
    );
  }

  const file = writeResults('master', { goals, figures, baseline, ratios });
  if (verdicts.length > 0) {
    printTable(
      'Goals',
      ['figure', 'measured', 'goal', ''],
      verdicts.map(([name, v, goal, ok]) => [
        name,
        v.toFixed(name === 'cpuShareAt10k' ? 4 : 2),
        goal,
        ok ? 'met' : 'MISSED',
      ]),
    );
  }
  console.log(`\n${machineLoad()} at the end. Wrote ${file}`);
}

await runBenchmark('master', main, WATCHDOG_MS);
