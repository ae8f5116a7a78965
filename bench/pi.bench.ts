/**
 * Benchmark `pi`: SparkPi with 10^8 samples on 2 executors × 1 core, against the same
 * dart-throwing loop on one thread of this process.
 *
 * SparkPi throws n = 100,000 × slices darts in `slices` tasks (examples/pi.ts, after Spark's
 * SparkPi); 10^8 samples is 1,000 slices, so 1,000 tasks of 10^5 darts each. The cluster is a
 * master and 2 workers × 1 core, each a process started from the built bundle
 * (bench/lib/clusterServer.ts).
 *
 * - single thread (the baseline): the loop of examples/pi.ts's map and reduce written out by hand,
 *   `for (i = 1; i < n; i++) { x = …; y = …; count += x² + y² ≤ 1 ? 1 : 0 }`, in this process;
 *   ideal = its time ÷ 2 (two cores, no overhead at all).
 * - job: a WickContext in this process on the cluster, both executors registered, then just the
 *   action `wc.range(1, n, 1, slices).map(dart).reduce((a, b) => a + b)`, timed from its call to
 *   its result. ratios.efficiency = ideal ÷ job time.
 * - end to end: `node bin/wick.js submit --master <the cluster> examples/pi.ts 1000`, timed from
 *   the spawn to the process's exit: the CLI starting, bundling the app, registering, the master
 *   scheduling executors, the workers launching them, the job, and the application stopping.
 *   ratios.endToEndEfficiency = ideal ÷ that time. Before each submit the cluster is idle (no
 *   application, every core free), so it never waits for the previous application's executors,
 *   and the submit's single-thread run comes just before it (see main). The driver's first
 *   "Registered executor" line and the app's "Pi is roughly" line split that time
 *   (figures.endToEndFirstExecutorMs, figures.endToEndResultMs; the rest is stopping and exiting).
 *
 * - two threads (context, not a goal): the same loop in two worker threads of this process at
 *   once, half the darts each: what this machine gives two CPU-bound threads. On a virtual or
 *   shared machine two busy CPUs may each run slower than one (here the two threads took between
 *   0.79 and 0.99 of the ideal, run to run). ratios.twoThreadsVsIdeal = ideal ÷ their time, and
 *   ratios.efficiencyVsTwoThreads = their time ÷ the job's: the share of what the machine gives
 *   that the job gets.
 *
 * Rounds alternate the single-thread loop, the two threads and the job (and which goes first),
 * after one warm-up of each, so that each ratio compares runs made under the same conditions;
 * figures are medians.
 * For context, ratios.cpuEfficiency = the single-thread loop's CPU time ÷ the CPU time the job
 * cost its executor processes (all their threads, from /proc): how much work the job adds to the
 * same darts, whatever else runs on the machine (wall-clock efficiency swings with other load).
 * ratios.cpuEfficiencyWithDriver counts the driver's CPU over the job too (this process, which
 * does nothing else meanwhile), and figures split the executors' CPU between their main threads
 * (RPC, status reports, handing tasks to the pool) and their pool threads (the darts), beside the
 * CPU of the one thread and of the two threads: where the job's overhead goes.
 * The machine's load average is reported: other work on the same CPUs slows the two executors
 * more than the one thread of the baseline. Writes bench/results/pi.json. Goals: the `goals` list
 * below.
 *
 *   npm run bench -- pi [--slices 1000] [--rounds 3] [--e2e-rounds 3] [--profile DIR]
 *
 * --profile DIR writes CPU profiles of each executor (bench/lib/cpuProfilePreload.cjs through the
 * workers' NODE_OPTIONS; the pool threads that run tasks are not in them) and of this process over
 * the timed jobs. Profiled figures are not comparable with others.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import type { WickContext } from '../backend/app/index.js';
import { setLogLevel } from '../backend/util/log.js';
import { int, sized } from './lib/args.js';
import { runCommand } from './lib/command.js';
import type { Goal } from './lib/goals.js';
import { stopAll } from './lib/process.js';
import { cpuSeconds, kernelCounts, threadCpuSeconds } from './lib/procStat.js';
import { executorProfileEnv } from './lib/profiling.js';
import { writeResults } from './lib/results.js';
import { runBenchmark } from './lib/run.js';
import { median, round } from './lib/stats.js';
import { fmt, printTable } from './lib/table.js';
import { connect, executorPids, startCluster, waitForIdleCluster } from './lib/wickApp.js';

const GOAL_EFFICIENCY = 0.9;
const GOAL_E2E_EFFICIENCY = 0.8;

/**
 * Issue 31: the job within 0.97 of two threads of one process (item 5), end to end ≥ 0.80 (item
 * 5; item 2's first step is 0.75), and the job ≥ 0.9 of the ideal as before.
 */
const goals: Goal[] = [
  { figure: 'ratios.efficiency', op: '>=', value: GOAL_EFFICIENCY, what: 'job ÷ ideal' },
  { figure: 'ratios.efficiencyVsTwoThreads', op: '>=', value: 0.97, what: 'job ÷ two threads' },
  {
    figure: 'ratios.endToEndEfficiency',
    op: '>=',
    value: GOAL_E2E_EFFICIENCY,
    what: 'wick submit, end to end ÷ ideal',
    optional: 'measured only with --e2e-rounds ≥ 1',
  },
];
const WATCHDOG_MS = 20 * 60_000;
const EXECUTORS = 2;
const root = fileURLToPath(new URL('..', import.meta.url));

const { values: opts } = parseArgs({
  options: {
    slices: { type: 'string', default: sized('1000', '20') },
    rounds: { type: 'string', default: sized('3', '1') },
    'e2e-rounds': { type: 'string', default: sized('3', '1') },
    profile: { type: 'string' },
  },
  strict: true,
});

const slices = int('slices', opts.slices, 1, 21_474);
const rounds = int('rounds', opts.rounds, 1, 50);
const e2eRounds = int('e2e-rounds', opts['e2e-rounds'], 0, 50);
const profileDir = opts.profile ? resolve(opts.profile) : undefined;
/** examples/pi.ts: n = 100,000 × slices darts, thrown as range(1, n), so n − 1 of them. */
const n = Math.min(100_000 * slices, 2 ** 31 - 1);

/** The dart-throwing loop of examples/pi.ts, by hand on this thread: the darts inside the circle. */
function singleThreadPi(count: number): number {
  let inside = 0;
  for (let i = 1; i < count; i++) {
    const x = Math.random() * 2 - 1;
    const y = Math.random() * 2 - 1;
    inside += x * x + y * y <= 1 ? 1 : 0;
  }
  return inside;
}

/** The job of examples/pi.ts. */
function wickPi(wc: WickContext, count: number, parts: number): Promise<number> {
  return wc
    .range(1, count, 1, parts)
    .map((): number => {
      const x = Math.random() * 2 - 1;
      const y = Math.random() * 2 - 1;
      return x * x + y * y <= 1 ? 1 : 0;
    })
    .reduce((a, b) => a + b);
}

/**
 * An executor's CPU since `before` (threadCpuSeconds), in ms: its main thread's, and its pool
 * thread's (with 1 core, the one other thread that ran the darts: the busiest).
 */
function threadSplit(pid: number, before: Map<number, number>): { mainMs: number; poolMs: number } {
  let mainMs = 0;
  let poolMs = 0;
  for (const [tid, s] of threadCpuSeconds(pid)) {
    const ms = (s - (before.get(tid) ?? 0)) * 1000;
    if (tid === pid) mainMs = ms;
    else poolMs = Math.max(poolMs, ms);
  }
  return { mainMs, poolMs };
}

/**
 * Two threads of this process, each throwing half the darts with the same loop at the same time:
 * what this machine gives two CPU-bound threads (on a shared or virtual machine, two busy CPUs
 * may each run slower than one busy CPU). Not the ideal; printed beside it.
 */
class ParallelLoops {
  private readonly threads = [0, 1].map(
    () =>
      new Worker(
        `const { parentPort } = require('node:worker_threads');
         ${singleThreadPi.toString()}
         parentPort.on('message', (n) => parentPort.postMessage(singleThreadPi(n)));`,
        { eval: true },
      ),
  );

  /** Runs both halves at once; resolves with the darts inside the circle. */
  async run(count: number): Promise<number> {
    const half = Math.floor(count / 2);
    const parts = await Promise.all(
      this.threads.map(
        (t, i) =>
          new Promise<number>((resolve, reject) => {
            t.once('message', resolve);
            t.once('error', reject);
            t.postMessage(i === 0 ? half + 1 : count - half);
          }),
      ),
    );
    return parts.reduce((a, b) => a + b, 0);
  }

  stop(): Promise<number[]> {
    return Promise.all(this.threads.map((t) => t.terminate()));
  }
}

type KernelCounts = ReturnType<typeof kernelCounts>;

function diffCounts(after: KernelCounts, before: KernelCounts): KernelCounts {
  return {
    reads: after.reads - before.reads,
    writes: after.writes - before.writes,
    voluntarySwitches: after.voluntarySwitches - before.voluntarySwitches,
    involuntarySwitches: after.involuntarySwitches - before.involuntarySwitches,
  };
}

function sumCounts(all: KernelCounts[]): KernelCounts {
  return all.reduce((a, c) => ({
    reads: a.reads + c.reads,
    writes: a.writes + c.writes,
    voluntarySwitches: a.voluntarySwitches + c.voluntarySwitches,
    involuntarySwitches: a.involuntarySwitches + c.involuntarySwitches,
  }));
}

async function timed<T>(fn: () => Promise<T> | T): Promise<{ ms: number; value: T }> {
  const t0 = performance.now();
  const value = await fn();
  return { ms: performance.now() - t0, value };
}

/**
 * Whether an estimate is π as far as its darts allow: within 0.01, or 6 standard deviations
 * (4·√(p(1−p)/darts), p = π/4) when fewer darts make that wider: 0.01 is 3σ at 200,000 darts, a
 * smoke run's warm-up, which then fails one run in a few hundred per check.
 */
function checkPi(inside: number, darts: number, what: string): void {
  const pi = (4 * inside) / darts;
  const p = Math.PI / 4;
  const tolerance = Math.max(0.01, 6 * 4 * Math.sqrt((p * (1 - p)) / darts));
  if (Math.abs(pi - Math.PI) > tolerance) throw new Error(`${what} estimated π as ${pi}`);
}

/** One `wick submit examples/pi.ts`: ms from the spawn to its exit, and to the moments on the way. */
interface SubmitRun {
  ms: number;
  /** The driver's log line "Registered executor …" (the first). */
  firstExecutorMs: number;
  /** The application's "Pi is roughly …" on stdout: the job is done. */
  resultMs: number;
}

/** Runs examples/pi.ts through `wick submit` on the cluster. */
async function submitPi(masterUrl: string): Promise<SubmitRun> {
  const run = await runCommand(
    process.execPath,
    [join(root, 'bin/wick.js'), 'submit', '--master', masterUrl, 'examples/pi.ts', String(slices)],
    // INFO for the driver's few milestone lines (tasks log in the executors' files, not here).
    { cwd: root, env: { ...process.env, WICK_LOG_LEVEL: 'INFO' }, timeoutMs: 5 * 60_000 },
  );
  const out = run.lines.map((l) => l.text).join('\n');
  const at = (re: RegExp) => run.lines.find((l) => re.test(l.text));
  const registered = at(/Registered executor .* with ID /);
  const result = at(/^Pi is roughly 3\.1/);
  if (run.code !== 0 || !registered || !result) {
    throw new Error(
      `wick submit examples/pi.ts exited ${run.code ?? run.signal}:\n${out.slice(-2000)}`,
    );
  }
  return {
    ms: run.ms,
    firstExecutorMs: registered.at - run.startedAt,
    resultMs: result.at - run.startedAt,
  };
}

async function main(): Promise<void> {
  setLogLevel('WARN');
  if (profileDir) mkdirSync(profileDir, { recursive: true });
  const env = executorProfileEnv(profileDir);
  const loadBefore = os.loadavg()[0] as number;
  const cluster = await startCluster({ workers: EXECUTORS, cores: 1, env });
  let wc: WickContext | undefined;
  let parallel: ParallelLoops | undefined;
  try {
    wc = await connect(cluster.ready.url, 'bench-pi', EXECUTORS);
    const context = wc;
    console.log(
      `pi: ${fmt(n - 1)} darts in ${fmt(slices)} tasks on ${EXECUTORS} executors × 1 core (cluster ${cluster.ready.url}); ` +
        `${rounds} rounds of job vs one thread, ${e2eRounds} of wick submit; ${os.cpus().length} CPUs, load ${loadBefore.toFixed(1)}`,
    );
    // Warm-up: a tenth of the work on both sides (JIT of the loop here and on the pool threads).
    const warm = Math.max(2, Math.floor(n / 10));
    checkPi(singleThreadPi(warm), warm - 1, 'the warm-up loop');
    checkPi(await wickPi(context, warm, Math.max(1, Math.floor(slices / 10))), warm - 1, 'warm-up');
    parallel = new ParallelLoops();
    checkPi(await parallel.run(warm), warm - 1, 'the warm-up of two threads');
    const pair = parallel;

    let session: Session | undefined;
    if (profileDir) {
      session = new Session();
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.start');
    }
    const singleMs: number[] = [];
    const jobMs: number[] = [];
    const singleCpuMs: number[] = [];
    const jobCpuMs: number[] = [];
    const jobMainCpuMs: number[] = [];
    const jobPoolCpuMs: number[] = [];
    const jobDriverCpuMs: number[] = [];
    const jobKernel: { executors: KernelCounts; driver: KernelCounts }[] = [];
    const pids = executorPids(context.appId, cluster.pid);
    const efficiency: number[] = [];
    const parallelMs: number[] = [];
    const parallelCpuMs: number[] = [];
    const vsParallel: number[] = [];
    for (let r = 0; r < rounds; r++) {
      const runSingle = async () => {
        const cpu0 = process.cpuUsage();
        const t = await timed(() => singleThreadPi(n));
        const cpu = process.cpuUsage(cpu0);
        singleCpuMs.push((cpu.user + cpu.system) / 1000);
        checkPi(t.value, n - 1, 'the single-thread loop');
        singleMs.push(t.ms);
      };
      const runParallel = async () => {
        const cpu0 = process.cpuUsage();
        const t = await timed(() => pair.run(n));
        const cpu = process.cpuUsage(cpu0);
        parallelCpuMs.push((cpu.user + cpu.system) / 1000);
        checkPi(t.value, n - 1, 'two threads');
        parallelMs.push(t.ms);
      };
      const runJob = async () => {
        const cpu0 = pids.map(cpuSeconds);
        const threads0 = pids.map(threadCpuSeconds);
        const kernel0 = pids.map(kernelCounts);
        const driverKernel0 = kernelCounts(process.pid);
        const driver0 = process.cpuUsage();
        const t = await timed(() => wickPi(context, n, slices));
        const driver = process.cpuUsage(driver0);
        jobKernel.push({
          executors: sumCounts(
            pids.map((pid, i) => diffCounts(kernelCounts(pid), kernel0[i] as KernelCounts)),
          ),
          driver: diffCounts(kernelCounts(process.pid), driverKernel0),
        });
        const cpu1 = pids.map(cpuSeconds);
        const split = pids.map((pid, i) => threadSplit(pid, threads0[i] as Map<number, number>));
        jobCpuMs.push(cpu1.reduce((a, c, i) => a + (c - (cpu0[i] as number)) * 1000, 0));
        jobMainCpuMs.push(split.reduce((a, s) => a + s.mainMs, 0));
        jobPoolCpuMs.push(split.reduce((a, s) => a + s.poolMs, 0));
        jobDriverCpuMs.push((driver.user + driver.system) / 1000);
        checkPi(t.value, n - 1, 'the job');
        jobMs.push(t.ms);
      };
      if (r % 2 === 0) {
        await runSingle();
        await runParallel();
        await runJob();
      } else {
        await runJob();
        await runParallel();
        await runSingle();
      }
      const s = singleMs[r] as number;
      const j = jobMs[r] as number;
      efficiency.push(s / 2 / j);
      vsParallel.push((parallelMs[r] as number) / j);
      console.log(
        `  round ${r + 1}/${rounds}: one thread ${fmt(s)} ms, two threads ${fmt(parallelMs[r] as number)} ms, job ${fmt(j)} ms, efficiency ${(s / 2 / j).toFixed(3)}; load ${(os.loadavg()[0] as number).toFixed(1)}`,
      );
    }
    if (session && profileDir) {
      const { profile } = await session.post('Profiler.stop');
      session.disconnect();
      const file = join(profileDir, `driver-${process.pid}.cpuprofile`);
      writeFileSync(file, JSON.stringify(profile));
      console.log(`  profile of the driver: ${file}`);
    }
    await context.stop();
    wc = undefined;

    // End to end: each submit finds the cluster idle, its own one-thread run just before it. (A
    // worker starts its next standby executor once the last application's executor there has
    // ended, which takes it a few hundred milliseconds: the one-thread run leaves it that time, as
    // a user's next submit usually does; one straight after another application's end would find
    // the standby still loading.)
    const e2eMs: number[] = [];
    const e2eFirstExecutorMs: number[] = [];
    const e2eResultMs: number[] = [];
    const e2eSingleMs: number[] = [];
    const e2eEfficiency: number[] = [];
    for (let r = 0; r < e2eRounds; r++) {
      await waitForIdleCluster(cluster.ready.url);
      const single = await timed(() => singleThreadPi(n));
      checkPi(single.value, n - 1, 'the single-thread loop');
      const { ms, firstExecutorMs, resultMs } = await submitPi(cluster.ready.url);
      e2eMs.push(ms);
      e2eFirstExecutorMs.push(firstExecutorMs);
      e2eResultMs.push(resultMs);
      e2eSingleMs.push(single.ms);
      e2eEfficiency.push(single.ms / 2 / ms);
      console.log(
        `  submit ${r + 1}/${e2eRounds}: wick submit ${fmt(ms)} ms (first executor at ${fmt(firstExecutorMs)}, result at ${fmt(resultMs)}), one thread ${fmt(single.ms)} ms, efficiency ${(single.ms / 2 / ms).toFixed(3)}; load ${(os.loadavg()[0] as number).toFixed(1)}`,
      );
    }

    const single = median([...singleMs, ...e2eSingleMs]);
    const figures: Record<string, number> = {
      jobMs: round(median(jobMs), 1),
      jobExecutorCpuMs: round(median(jobCpuMs), 1),
      jobExecutorMainThreadsCpuMs: round(median(jobMainCpuMs), 1),
      jobExecutorPoolThreadsCpuMs: round(median(jobPoolCpuMs), 1),
      jobDriverCpuMs: round(median(jobDriverCpuMs), 1),
      idealMs: round(median(singleMs) / 2, 1),
      twoThreadsMs: round(median(parallelMs), 1),
      twoThreadsCpuMs: round(median(parallelCpuMs), 1),
      samples: n - 1,
      tasks: slices,
      executors: EXECUTORS,
      cpus: os.cpus().length,
      loadAverage1m: round(Math.max(loadBefore, os.loadavg()[0] as number), 2),
    };
    const perTask = (pick: (k: (typeof jobKernel)[number]) => number) =>
      round(median(jobKernel.map(pick)) / slices, 2);
    figures.executorWritesPerTask = perTask((k) => k.executors.writes);
    figures.executorReadsPerTask = perTask((k) => k.executors.reads);
    figures.executorWakeupsPerTask = perTask((k) => k.executors.voluntarySwitches);
    figures.executorPreemptionsPerTask = perTask((k) => k.executors.involuntarySwitches);
    figures.driverWritesPerTask = perTask((k) => k.driver.writes);
    figures.driverWakeupsPerTask = perTask((k) => k.driver.voluntarySwitches);
    if (e2eRounds > 0) {
      figures.endToEndMs = round(median(e2eMs), 1);
      figures.endToEndFirstExecutorMs = round(median(e2eFirstExecutorMs), 1);
      figures.endToEndResultMs = round(median(e2eResultMs), 1);
    }
    const eff = round(median(efficiency), 3);
    const cpuEff = round(median(singleCpuMs) / median(jobCpuMs), 3);
    const cpuEffAll = round(
      median(singleCpuMs) / median(jobCpuMs.map((c, i) => c + (jobDriverCpuMs[i] as number))),
      3,
    );
    const ratios: Record<string, number> = {
      efficiency: eff,
      efficiencyVsTwoThreads: round(median(vsParallel), 3),
      twoThreadsVsIdeal: round(
        median(singleMs.map((x, i) => x / 2 / (parallelMs[i] as number))),
        3,
      ),
      cpuEfficiency: cpuEff,
      cpuEfficiencyWithDriver: cpuEffAll,
    };
    if (e2eRounds > 0) ratios.endToEndEfficiency = round(median(e2eEfficiency), 3);
    const file = writeResults('pi', {
      goals,
      figures,
      baseline: {
        singleThreadMs: round(single, 1),
        singleThreadCpuMs: round(median(singleCpuMs), 1),
      },
      ratios,
    });

    printTable(
      `pi — ${fmt(n - 1)} darts, ${fmt(slices)} tasks, ${EXECUTORS} executors × 1 core (medians)`,
      ['', 'ms', 'ideal ÷ this'],
      [
        ['one thread (baseline)', fmt(median(singleMs)), ''],
        ['ideal: one thread ÷ 2', fmt(median(singleMs) / 2), '1.000'],
        [
          'two threads of this process, half the darts each (what the machine gives)',
          fmt(median(parallelMs)),
          (ratios.twoThreadsVsIdeal as number).toFixed(3),
        ],
        ['job (executors registered)', fmt(median(jobMs)), eff.toFixed(3)],
        [
          '   job ÷ two threads (efficiencyVsTwoThreads: the share of what the machine gives)',
          '',
          (ratios.efficiencyVsTwoThreads as number).toFixed(3),
        ],
        [
          `CPU: one thread ${fmt(median(singleCpuMs))} ms ÷ the job's executors' ${fmt(median(jobCpuMs))} ms`,
          '',
          cpuEff.toFixed(3),
        ],
        [
          `   of which the executors' main threads ${fmt(median(jobMainCpuMs))} ms, pool threads ${fmt(median(jobPoolCpuMs))} ms (one thread: ${fmt(median(singleCpuMs))}, two: ${fmt(median(parallelCpuMs))}); with the driver's ${fmt(median(jobDriverCpuMs))} ms`,
          '',
          cpuEffAll.toFixed(3),
        ],
        [
          `   per task: executors ${figures.executorWritesPerTask} writes, ${figures.executorReadsPerTask} reads, ${figures.executorWakeupsPerTask} wake-ups, ${figures.executorPreemptionsPerTask} preemptions; driver ${figures.driverWritesPerTask} writes, ${figures.driverWakeupsPerTask} wake-ups`,
          '',
          '',
        ],
        ...(e2eRounds > 0
          ? [
              [
                'wick submit examples/pi.ts, end to end',
                fmt(median(e2eMs)),
                (ratios.endToEndEfficiency as number).toFixed(3),
              ],
              ['   … first executor registered', fmt(median(e2eFirstExecutorMs)), ''],
              ['   … result printed (the job done)', fmt(median(e2eResultMs)), ''],
            ]
          : []),
      ],
    );
    const verdict = (v: number, goal: number) => (v >= goal ? 'met' : 'MISSED');
    printTable(
      'Goals',
      ['ratio', 'measured', 'goal', ''],
      [
        ['efficiency', eff.toFixed(3), `≥ ${GOAL_EFFICIENCY}`, verdict(eff, GOAL_EFFICIENCY)],
        ...(e2eRounds > 0
          ? [
              [
                'endToEndEfficiency',
                (ratios.endToEndEfficiency as number).toFixed(3),
                `≥ ${GOAL_E2E_EFFICIENCY}`,
                verdict(ratios.endToEndEfficiency as number, GOAL_E2E_EFFICIENCY),
              ],
            ]
          : []),
      ],
    );
    console.log(
      `\n${os.cpus().length} CPUs; 1-minute load average ${loadBefore.toFixed(1)} before, ${(os.loadavg()[0] as number).toFixed(1)} after (other work on the CPUs lowers both efficiencies).`,
    );
    console.log(`Wrote ${file}`);
  } finally {
    await parallel?.stop();
    await wc?.stop().catch(() => {});
    await stopAll();
  }
}

await runBenchmark('pi', main, WATCHDOG_MS);
