/**
 * Benchmark `tasks`: how many no-op tasks per second one driver gets through on 2 executors.
 *
 * Wick: a local cluster of a master and 2 workers × 1 core, each a process started from the built
 * bundle (bench/lib/clusterServer.ts); the driver is a WickContext in this process with the
 * cluster's URL as master, so each worker launches one executor of 1 core. Once both executors
 * have registered, each measured job is `wc.range(0, N, 1, N).foreach(() => {})`: N tasks of one
 * element each, timed from the action's call to its result (scheduling, LaunchTask, the task on the
 * executor's thread pool, StatusUpdate, for every task).
 *
 * Baseline: the least a driver/executor loop can do over the same kind of transport. A raw driver
 * in this process (bench/lib/rawTaskDriver.ts) and 2 raw executor processes
 * (bench/lib/rawTaskExecutor.ts) over plain loopback sockets: the driver writes minimal task
 * messages as NDJSON, each executor answers every one at once with a status line; no RPC layer,
 * no validation, no thread pool. It keeps as many tasks outstanding per executor as Wick's driver
 * does for short tasks: 1 per core plus DriverEndpoint's prefetch (PREFETCH_PER_CORE queued per
 * core), so both sides run at the same concurrency. The same loop with one task in flight per core
 * (Spark's own concurrency, no prefetch) is shown too, for context.
 *
 * Each round runs one Wick job and one raw job of N tasks, alternating which goes first, after a
 * warm-up of both; figures are medians over rounds. Also reported: CPU time per task of the driver
 * (this process, during Wick's jobs) and of each executor process (utime + stime of all its
 * threads, from /proc), and the machine's load average, since other work on a small machine moves
 * these numbers. From the CPU times comes figures.cpuBoundTasksPerSecond: the CPUs ÷ (driver +
 * executor CPU per task), what the same work would reach with the machine to itself (an estimate:
 * CPU time per task also grows somewhat on a busy machine). Writes bench/results/tasks.json: figures.tasksPerSecond, baseline.tasksPerSecond,
 * ratios.tasksPerSecond (Wick ÷ raw). Goal: ≥ 20,000 tasks/s.
 *
 *   npm run bench -- tasks [--tasks 20000] [--warmup 10000] [--rounds 5] [--profile DIR]
 *
 * Watching costs (issue 27): after those rounds, the same jobs by two applications in turn, one
 * with the master summary (wick.ui.reportStatus: MasterStatusReporter) and an event log on, one
 * with both off (the listener bus and the status tracker are always there), alternating which
 * goes first, each connected afresh; ratios.watchedTasksPerSecond = on ÷ off (goal ≥ 0.9),
 * figures.eventLogBytesPerTask (the "on" application's log ÷ every task it ran). Then, in this
 * process, the master's memory for one application's summary after a job of 100,000 tasks each
 * reported one by one (the worst case), with the default wick.ui.retainedTasks (100,000) and with
 * 10,000: figures.summaryBytesPerRetainedTask, and ratios.summaryPastRetained (100,000 tasks ÷
 * 10,000 tasks, both keeping 10,000: ≤ 1.5 when the summary is bounded by the setting). And the
 * watching consumers alone in this process (bench/lib/watchConsumers.ts: the event log, the
 * report and the master's applying it, without a job): figures.watchConsumers{On,Off,Master}UsPerTask
 * and ratios.watchedCpuFloor, the job's CPU per task ÷ that plus what the consumers add: the best
 * on ÷ off that a machine whose CPUs are all busy allows (context, not a goal).
 *
 * --profile DIR writes CPU profiles into DIR: of this process (the driver) over the measured
 * rounds (node:inspector), and of each executor from start to exit (bench/lib/cpuProfilePreload.cjs
 * through the workers' NODE_OPTIONS). Profiled runs are slower; do not compare their figures.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { PREFETCH_PER_CORE } from '../backend/app/driver/DriverEndpoint.js';
import type { WickContext } from '../backend/app/index.js';
import { setLogLevel } from '../backend/util/log.js';
import { int, sized } from './lib/args.js';
import type { Goal } from './lib/goals.js';
import { startServer, stopAll } from './lib/process.js';
import { cpuSeconds } from './lib/procStat.js';
import { executorProfileEnv } from './lib/profiling.js';
import { RawTaskDriver } from './lib/rawTaskDriver.js';
import { writeResults } from './lib/results.js';
import { runBenchmark } from './lib/run.js';
import { median, round } from './lib/stats.js';
import { summaryBytes } from './lib/summaryMemory.js';
import { fmt, printTable } from './lib/table.js';
import { watchConsumersCost } from './lib/watchConsumers.js';
import { connect, executorPids, startCluster } from './lib/wickApp.js';

const GOAL_TASKS_PER_SECOND = 20_000;

/** Issue 31: the rate, and (item 2) the ratio to raw NDJSON at the same concurrency won back. */
const goals: Goal[] = [
  {
    figure: 'figures.tasksPerSecond',
    op: '>=',
    value: GOAL_TASKS_PER_SECOND,
    what: 'no-op tasks/s',
  },
  { figure: 'ratios.tasksPerSecond', op: '>=', value: 0.085, what: 'tasks/s ÷ raw' },
  {
    figure: 'ratios.watchedTasksPerSecond',
    op: '>=',
    value: 0.9,
    what: 'tasks/s with master summary + event log ÷ without',
  },
  {
    figure: 'figures.summaryBytesPerRetainedTask',
    op: '<=',
    value: 400,
    what: "master's summary bytes per kept task (100,000-task job)",
  },
  {
    figure: 'ratios.summaryPastRetained',
    op: '<=',
    value: 1.5,
    what: 'summary of 100,000 tasks ÷ of 10,000, keeping 10,000',
  },
];
const WATCHDOG_MS = 15 * 60_000;
const EXECUTORS = 2;
const CORES = 1;

const { values: opts } = parseArgs({
  options: {
    tasks: { type: 'string', default: sized('20000', '200') },
    'summary-tasks': { type: 'string', default: sized('100000', '2000') },
    warmup: { type: 'string', default: sized('10000', '100') },
    rounds: { type: 'string', default: sized('5', '1') },
    profile: { type: 'string' },
  },
  strict: true,
});

const tasks = int('tasks', opts.tasks, 100, 10_000_000);
const warmup = int('warmup', opts.warmup, 0, 10_000_000);
const rounds = int('rounds', opts.rounds, 1, 100);
const summaryTasks = int('summary-tasks', opts['summary-tasks'], 100, 10_000_000);
const profileDir = opts.profile ? resolve(opts.profile) : undefined;
const inFlight = CORES * (1 + PREFETCH_PER_CORE);

interface Sample {
  tasksPerSecond: number;
  /** CPU µs per task of this process (the driver) during the window. */
  driverCpuUs: number;
  /** CPU µs per task of each executor process during the window. */
  executorCpuUs: number[];
}

/** Runs `job` and measures its rate and the CPU it cost this process and `pids`. */
async function measure(n: number, pids: number[], job: () => Promise<void>): Promise<Sample> {
  const cpu0 = process.cpuUsage();
  const ex0 = pids.map(cpuSeconds);
  const t0 = performance.now();
  await job();
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const ex1 = pids.map(cpuSeconds);
  return {
    tasksPerSecond: n / (ms / 1000),
    driverCpuUs: (cpu.user + cpu.system) / n,
    executorCpuUs: ex1.map((c, i) => ((c - (ex0[i] as number)) * 1e6) / n),
  };
}

function summarize(samples: Sample[]): Sample {
  return {
    tasksPerSecond: Math.round(median(samples.map((s) => s.tasksPerSecond))),
    driverCpuUs: round(median(samples.map((s) => s.driverCpuUs)), 1),
    executorCpuUs: (samples[0]?.executorCpuUs ?? []).map((_, i) =>
      round(median(samples.map((s) => s.executorCpuUs[i] as number)), 1),
    ),
  };
}

async function main(): Promise<void> {
  setLogLevel('WARN');
  if (profileDir) mkdirSync(profileDir, { recursive: true });
  const profileEnv = executorProfileEnv(profileDir);
  const loadBefore = os.loadavg()[0] as number;
  const cluster = await startCluster({ workers: EXECUTORS, cores: CORES, env: profileEnv });
  const raw = await RawTaskDriver.listen();
  let wc: WickContext | undefined;
  try {
    const rawExecutors = await Promise.all(
      Array.from({ length: EXECUTORS }, (_, i) =>
        startServer<{ pid: number }>('bench/lib/rawTaskExecutor.ts', {
          args: [String(raw.port), String(i)],
        }),
      ),
    );
    await raw.waitForExecutors(EXECUTORS);
    const rawPids = rawExecutors.map((s) => s.pid);
    wc = await connect(cluster.ready.url, 'bench-tasks', EXECUTORS);
    const context = wc;
    const wickPids = executorPids(context.appId, cluster.pid);
    if (wickPids.length !== EXECUTORS) {
      throw new Error(
        `found ${wickPids.length} executor processes of ${context.appId}, expected 2`,
      );
    }
    console.log(
      `tasks: ${EXECUTORS} executors × ${CORES} core (cluster ${cluster.ready.url}, app ${context.appId}, executor pids ${wickPids.join(', ')}); ` +
        `${rounds} rounds of ${fmt(tasks)} no-op tasks, Wick vs raw NDJSON with ${inFlight} in flight per executor; ${os.cpus().length} CPUs, load ${loadBefore.toFixed(1)}`,
    );

    const wickJob = (n: number) => () => context.range(0, n, 1, n).foreach(() => {});
    const rawJob = (n: number, depth: number) => () => raw.run(n, depth);
    // Warm-up: JIT on every side, and the executors' pool threads started.
    if (warmup > 0) {
      await wickJob(warmup)();
      await rawJob(warmup, inFlight)();
      await rawJob(warmup, CORES)();
    }

    let session: Session | undefined;
    if (profileDir) {
      session = new Session();
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.start');
    }
    const wick: Sample[] = [];
    const base: Sample[] = [];
    const base1: Sample[] = [];
    for (let r = 0; r < rounds; r++) {
      const runWick = async () => wick.push(await measure(tasks, wickPids, wickJob(tasks)));
      const runRaw = async () => {
        base.push(await measure(tasks, rawPids, rawJob(tasks, inFlight)));
        base1.push(await measure(tasks, rawPids, rawJob(tasks, CORES)));
      };
      if (r % 2 === 0) {
        await runWick();
        await runRaw();
      } else {
        await runRaw();
        await runWick();
      }
      const w = wick[wick.length - 1] as Sample;
      const b = base[base.length - 1] as Sample;
      const b1 = base1[base1.length - 1] as Sample;
      console.log(
        `  round ${r + 1}/${rounds}: Wick ${fmt(w.tasksPerSecond)}/s (driver ${fmt(w.driverCpuUs, 1)} µs/task, executors ${w.executorCpuUs.map((c) => fmt(c, 1)).join(' + ')} µs/task); ` +
          `raw ${fmt(b.tasksPerSecond)}/s, raw 1 in flight ${fmt(b1.tasksPerSecond)}/s; load ${(os.loadavg()[0] as number).toFixed(1)}`,
      );
    }
    if (session && profileDir) {
      const { profile } = await session.post('Profiler.stop');
      session.disconnect();
      const file = join(profileDir, `driver-${process.pid}.cpuprofile`);
      writeFileSync(file, JSON.stringify(profile));
      console.log(`  profile of the driver: ${file}`);
    }

    await wc.stop();
    wc = undefined;
    const watched = await watchCost(cluster.ready.url);
    // The consumers alone, in this process (bench/lib/watchConsumers.ts): what watching adds to
    // the CPU of a task whatever the rest does, and so the best on ÷ off this machine allows.
    const consumers = await watchConsumersCost(tasks, rounds);
    const kept = Math.min(summaryTasks, 100_000);
    const small = Math.max(1, Math.floor(summaryTasks / 10));
    // The smallest first: a store measured after bigger ones that became garbage reads low (the
    // heap before it still held some of theirs), which a full run showed as 0 MB.
    // Enough stores of each at once, read as one, to hold some 4 MB (about 280 bytes a kept task):
    // the heap moves by a few hundred KB between two reads whatever is made, so a smoke run's
    // store of 200 tasks, read alone, came out anywhere from 0 (ci-l) to 60 KB.
    const copies = Math.max(1, Math.ceil(4e6 / (small * 280)));
    const summarySmall = summaryBytes(small, small, copies);
    const summaryBounded = summaryBytes(summaryTasks, small, copies);
    const summaryAll = summaryBytes(summaryTasks, 100_000);
    console.log(
      `  master summary of a ${fmt(summaryTasks)}-task job: ${fmt(summaryAll / 1e6, 2)} MB keeping ${fmt(kept)} tasks (wick.ui.retainedTasks 100,000); ${fmt(summaryBounded / 1e6, 2)} MB keeping ${fmt(small)}, against ${fmt(summarySmall / 1e6, 2)} MB for a ${fmt(small)}-task job`,
    );

    const figures = summarize(wick);
    const baseline = summarize(base);
    const baseline1 = summarize(base1);
    const jobCpuUs = figures.driverCpuUs + figures.executorCpuUs.reduce((a, b) => a + b, 0);
    const watchAddsUs = Math.max(0, consumers.onUsPerTask - consumers.offUsPerTask);
    // CPU-bound, a job's rate goes as 1 ÷ its CPU per task: on ÷ off at best is this.
    const watchedCpuFloor = round(jobCpuUs / (jobCpuUs + watchAddsUs), 3);
    const ratios = {
      watchedTasksPerSecond: round(watched.on / watched.off, 3),
      summaryPastRetained: summarySmall > 0 ? round(summaryBounded / summarySmall, 3) : Number.NaN,
      tasksPerSecond: round(figures.tasksPerSecond / baseline.tasksPerSecond, 3),
      tasksPerSecondVsOneInFlight: round(figures.tasksPerSecond / baseline1.tasksPerSecond, 3),
      watchedCpuFloor,
    };
    const loadAfter = os.loadavg()[0] as number;
    const cpuBound = Math.round(
      (os.cpus().length * 1e6) /
        (figures.driverCpuUs + figures.executorCpuUs.reduce((a, b) => a + b, 0)),
    );
    const file = writeResults('tasks', {
      goals,
      figures: {
        tasksPerSecond: figures.tasksPerSecond,
        driverCpuUsPerTask: figures.driverCpuUs,
        executorCpuUsPerTask: round(
          figures.executorCpuUs.reduce((a, b) => a + b, 0),
          1,
        ),
        tasks,
        rounds,
        inFlightPerExecutor: inFlight,
        cpuBoundTasksPerSecond: cpuBound,
        cpus: os.cpus().length,
        loadAverage1m: round(Math.max(loadBefore, loadAfter), 2),
        watchedOnTasksPerSecond: watched.on,
        watchedOffTasksPerSecond: watched.off,
        eventLogBytesPerTask: watched.eventLogBytesPerTask,
        watchConsumersOnUsPerTask: consumers.onUsPerTask,
        watchConsumersOffUsPerTask: consumers.offUsPerTask,
        watchConsumersMasterUsPerTask: consumers.masterUsPerTask,
        summaryTasks,
        summaryMB: round(summaryAll / 1e6, 2),
        summaryBytesPerRetainedTask: Math.round(summaryAll / kept),
      },
      baseline: {
        tasksPerSecond: baseline.tasksPerSecond,
        tasksPerSecondOneInFlight: baseline1.tasksPerSecond,
        driverCpuUsPerTask: baseline.driverCpuUs,
        executorCpuUsPerTask: round(
          baseline.executorCpuUs.reduce((a, b) => a + b, 0),
          1,
        ),
      },
      ratios,
    });

    const exSum = (s: Sample) =>
      fmt(
        s.executorCpuUs.reduce((a, b) => a + b, 0),
        1,
      );
    printTable(
      `tasks — median of ${rounds} rounds of ${fmt(tasks)} no-op tasks on ${EXECUTORS} executors × ${CORES} core`,
      ['', 'tasks/s', 'driver CPU µs/task', 'executors CPU µs/task'],
      [
        [
          'Wick (WickContext → 2 executors)',
          fmt(figures.tasksPerSecond),
          fmt(figures.driverCpuUs, 1),
          exSum(figures),
        ],
        [
          `raw NDJSON, ${inFlight} in flight/executor (baseline)`,
          fmt(baseline.tasksPerSecond),
          fmt(baseline.driverCpuUs, 1),
          exSum(baseline),
        ],
        [
          `raw NDJSON, ${CORES} in flight/executor`,
          fmt(baseline1.tasksPerSecond),
          fmt(baseline1.driverCpuUs, 1),
          exSum(baseline1),
        ],
      ],
    );
    printTable(
      'Goals',
      ['', 'measured', 'goal', ''],
      [
        [
          'tasks/s (Wick)',
          fmt(figures.tasksPerSecond),
          `≥ ${fmt(GOAL_TASKS_PER_SECOND)}`,
          figures.tasksPerSecond >= GOAL_TASKS_PER_SECOND ? 'met' : 'MISSED',
        ],
        ['Wick ÷ raw (same concurrency)', ratios.tasksPerSecond.toFixed(3), '', ''],
        [
          'master summary + event log on ÷ off',
          ratios.watchedTasksPerSecond.toFixed(3),
          '≥ 0.9',
          ratios.watchedTasksPerSecond >= 0.9 ? 'met' : 'MISSED',
        ],
        ['event log bytes per task', fmt(watched.eventLogBytesPerTask, 1), '', ''],
        [
          `watching's consumers alone, CPU µs/task added (master's side ${fmt(consumers.masterUsPerTask, 2)})`,
          fmt(watchAddsUs, 2),
          '',
          '(context)',
        ],
        [
          'best on ÷ off those allow (job CPU ÷ job + consumers)',
          watchedCpuFloor.toFixed(3),
          '',
          '(context)',
        ],
        [
          `master summary, ${fmt(summaryTasks)}-task job (MB; bytes per kept task)`,
          `${fmt(summaryAll / 1e6, 2)}; ${fmt(Math.round(summaryAll / kept))}`,
          '≤ 400 B/task',
          summaryAll / kept <= 400 ? 'met' : 'MISSED',
        ],
        [
          `summary past wick.ui.retainedTasks (${fmt(summaryTasks)} ÷ ${fmt(small)} tasks)`,
          ratios.summaryPastRetained.toFixed(3),
          '≤ 1.5',
          ratios.summaryPastRetained <= 1.5 ? 'met' : 'MISSED',
        ],
        [
          'estimate with the CPUs to itself',
          fmt(cpuBound),
          `≥ ${fmt(GOAL_TASKS_PER_SECOND)}`,
          '(context)',
        ],
      ],
    );
    console.log(
      `\n${os.cpus().length} CPUs; 1-minute load average ${loadBefore.toFixed(1)} before, ${loadAfter.toFixed(1)} after (anything above ~0 is other work competing for the same CPUs).`,
    );
    console.log(`Wrote ${file}`);
  } finally {
    await wc?.stop().catch(() => {});
    await raw.close();
    await stopAll();
  }
}

/**
 * The same jobs by an application with the master summary and an event log on, and by one with
 * both off, in turn (alternating which goes first); each connects afresh and warms up, since two
 * cannot hold the cluster's two executors at once.
 */
async function watchCost(
  masterUrl: string,
): Promise<{ on: number; off: number; eventLogBytesPerTask: number }> {
  const logDir = mkdtempSync(join(os.tmpdir(), 'wick-bench-eventlog-'));
  const on: number[] = [];
  const off: number[] = [];
  let logBytes = 0;
  let loggedTasks = 0;
  const warm = Math.max(100, Math.floor(warmup / 4));
  try {
    for (let r = 0; r < rounds; r++) {
      const modes = r % 2 === 0 ? (['on', 'off'] as const) : (['off', 'on'] as const);
      for (const mode of modes) {
        const conf: Record<string, string> =
          mode === 'on'
            ? {
                'wick.ui.reportStatus': 'true',
                'wick.eventLog.enabled': 'true',
                'wick.eventLog.dir': logDir,
              }
            : { 'wick.ui.reportStatus': 'false', 'wick.eventLog.enabled': 'false' };
        const app = await connect(masterUrl, `bench-tasks-watch-${mode}`, EXECUTORS, conf);
        try {
          await app.range(0, warm, 1, warm).foreach(() => {});
          const s = await measure(tasks, [], () => app.range(0, tasks, 1, tasks).foreach(() => {}));
          (mode === 'on' ? on : off).push(s.tasksPerSecond);
        } finally {
          const path = app.eventLogPath;
          await app.stop();
          if (mode === 'on' && path) {
            logBytes += await closedLogSize(path);
            loggedTasks += warm + tasks;
          }
        }
      }
      console.log(
        `  watching, round ${r + 1}/${rounds}: on ${fmt(on.at(-1) ?? 0)}/s, off ${fmt(off.at(-1) ?? 0)}/s; load ${(os.loadavg()[0] as number).toFixed(1)}`,
      );
    }
  } finally {
    rmSync(logDir, { recursive: true, force: true });
  }
  return {
    on: Math.round(median(on)),
    off: Math.round(median(off)),
    eventLogBytesPerTask: round(logBytes / Math.max(1, loggedTasks), 1),
  };
}

/** The size of a log once its driver has closed it (stop() returns before it has). */
async function closedLogSize(path: string): Promise<number> {
  const deadline = Date.now() + 60_000;
  while (!existsSync(path)) {
    if (Date.now() > deadline) throw new Error(`the event log ${path} was never closed`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return statSync(path).size;
}

await runBenchmark('tasks', main, WATCHDOG_MS);
