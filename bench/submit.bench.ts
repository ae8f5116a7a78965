/**
 * Benchmark `submit`: how long from `wick submit` to the application's first executor registered.
 *
 * The cluster is a master and 2 workers × 1 core, each a process started from the built bundle
 * (bench/lib/clusterServer.ts), idle before every run (no application, every core free). Each run
 * spawns `node bin/wick.js submit --master <the cluster> examples/pi.ts 2` (client mode: the driver
 * runs in the submit process, as with spark-submit) and reads its stderr line by line.
 *
 * Definition: submitToExecutor = from just before the spawn to the moment this process reads the
 * driver's log line "Registered executor … with ID …". DriverEndpoint writes that line when it
 * accepts the executor's RegisterExecutor, before it answers it: the moment the driver knows it
 * has an executor and can launch tasks on it. It covers the CLI starting, bundling the app
 * (esbuild), the app starting its WickContext (RpcEnv, registering with the master), the master
 * scheduling executors, a worker launching one (a new Node process), and that executor fetching the
 * app's configuration and registering. The log line travels through a pipe, which adds microseconds.
 * The app then runs its small job and stops; only the time to the first registration counts.
 *
 * The other log lines on the way split that time into phases (medians over runs): the driver's
 * RpcEnv up, the application registered with the master, the executor added by the master.
 *
 * Baseline, for context: `node -e 0`, spawn to exit, measured the same way in the same run (the
 * least any fresh Node process costs here); `node bin/wick.js --version` (the CLI bundle loaded)
 * is shown too. Runs alternate between them. Writes bench/results/submit.json:
 * figures.submitToExecutorP50Ms, baseline.nodeStartP50Ms. Goal: ≤ 150 ms.
 *
 *   npm run bench -- submit [--runs 15]
 */
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { setLogLevel } from '../backend/util/log.js';
import { sized } from './lib/args.js';
import { type CommandLine, runCommand } from './lib/command.js';
import type { Goal } from './lib/goals.js';
import { stopAll } from './lib/process.js';
import { writeResults } from './lib/results.js';
import { runBenchmark } from './lib/run.js';
import { median, percentile, round } from './lib/stats.js';
import { fmt, printTable } from './lib/table.js';
import { startCluster, waitForIdleCluster } from './lib/wickApp.js';

const GOAL_MS = 150;

/** Issue 31: submit → first executor, and (item 2) against `node -e 0` in the same run. */
const goals: Goal[] = [
  {
    figure: 'figures.submitToExecutorP50Ms',
    op: '<=',
    value: GOAL_MS,
    what: 'submit → executor p50 (ms)',
  },
  {
    figure: 'ratios.submitToExecutorVsNodeStart',
    op: '<=',
    value: 1.1,
    what: 'submit → executor ÷ node -e 0',
  },
];
const WATCHDOG_MS = 15 * 60_000;
const root = fileURLToPath(new URL('..', import.meta.url));

const { values: opts } = parseArgs({
  options: { runs: { type: 'string', default: sized('15', '2') } },
  strict: true,
});
const runs = Number(opts.runs);
if (!Number.isInteger(runs) || runs < 1 || runs > 500) {
  throw new Error(`--runs must be a whole number from 1 to 500, got "${opts.runs}"`);
}

/** Phases of a submit, by the driver log line that ends each (matched in this order). */
const PHASES = [
  {
    key: 'driverUp',
    label: "driver's RpcEnv up",
    pattern: /Successfully started service 'wickDriver'/,
  },
  {
    key: 'appRegistered',
    label: 'app registered with the master',
    pattern: /Connected to Wick cluster with app ID/,
  },
  { key: 'executorAdded', label: 'executor added by the master', pattern: /Executor added: / },
  {
    key: 'executorRegistered',
    label: 'first executor registered with the driver',
    pattern: /Registered executor .* with ID /,
  },
] as const;
type PhaseKey = (typeof PHASES)[number]['key'];

async function submitOnce(
  masterUrl: string,
): Promise<Record<PhaseKey, number> & { exitMs: number }> {
  const seen: Partial<Record<PhaseKey, number>> = {};
  const run = await runCommand(
    process.execPath,
    [join(root, 'bin/wick.js'), 'submit', '--master', masterUrl, 'examples/pi.ts', '2'],
    {
      cwd: root,
      env: { ...process.env, WICK_LOG_LEVEL: 'INFO' },
      timeoutMs: 120_000,
      onLine: (line: CommandLine) => {
        if (line.stream !== 'stderr') return;
        for (const p of PHASES) {
          if (seen[p.key] === undefined && p.pattern.test(line.text)) seen[p.key] = line.at;
        }
      },
    },
  );
  const out = run.lines.map((l) => l.text).join('\n');
  if (run.code !== 0 || !/Pi is roughly 3\./.test(out)) {
    throw new Error(`wick submit exited ${run.code ?? run.signal}:\n${out.slice(-2000)}`);
  }
  const result = { exitMs: run.ms } as Record<PhaseKey, number> & { exitMs: number };
  for (const p of PHASES) {
    const at = seen[p.key];
    if (at === undefined)
      throw new Error(`wick submit never logged "${p.pattern.source}":\n${out}`);
    result[p.key] = at - run.startedAt;
  }
  return result;
}

async function spawnToExit(args: string[]): Promise<number> {
  const run = await runCommand(process.execPath, args, { cwd: root, timeoutMs: 60_000 });
  if (run.code !== 0) throw new Error(`node ${args.join(' ')} exited ${run.code ?? run.signal}`);
  return run.ms;
}

async function main(): Promise<void> {
  setLogLevel('WARN');
  const loadBefore = os.loadavg()[0] as number;
  const cluster = await startCluster({ workers: 2, cores: 1 });
  try {
    console.log(
      `submit: ${runs} runs of wick submit examples/pi.ts on ${cluster.ready.url} (2 workers × 1 core), each against node -e 0; ${os.cpus().length} CPUs, load ${loadBefore.toFixed(1)}`,
    );
    // Warm-up: the OS's file cache for node, the bundles and esbuild.
    await waitForIdleCluster(cluster.ready.url);
    await submitOnce(cluster.ready.url);
    await spawnToExit(['-e', '0']);

    const submits: (Record<PhaseKey, number> & { exitMs: number })[] = [];
    const nodeMs: number[] = [];
    const cliMs: number[] = [];
    for (let r = 0; r < runs; r++) {
      await waitForIdleCluster(cluster.ready.url);
      const s = await submitOnce(cluster.ready.url);
      submits.push(s);
      nodeMs.push(await spawnToExit(['-e', '0']));
      cliMs.push(await spawnToExit([join(root, 'bin/wick.js'), '--version']));
      console.log(
        `  run ${r + 1}/${runs}: first executor registered at ${fmt(s.executorRegistered, 1)} ms ` +
          `(driver up ${fmt(s.driverUp, 1)}, app registered ${fmt(s.appRegistered, 1)}, executor added ${fmt(s.executorAdded, 1)}; exit ${fmt(s.exitMs)}); ` +
          `node -e 0 ${fmt(nodeMs[r] as number, 1)} ms; load ${(os.loadavg()[0] as number).toFixed(1)}`,
      );
    }

    const sorted = submits.map((s) => s.executorRegistered).sort((a, b) => a - b);
    const p50 = percentile(sorted, 50);
    const nodeP50 = percentile(
      [...nodeMs].sort((a, b) => a - b),
      50,
    );
    const cliP50 = percentile(
      [...cliMs].sort((a, b) => a - b),
      50,
    );
    const phase = (k: PhaseKey) => median(submits.map((s) => s[k]));
    const loadAfter = os.loadavg()[0] as number;
    const file = writeResults('submit', {
      goals,
      figures: {
        submitToExecutorP50Ms: round(p50, 1),
        submitToExecutorP90Ms: round(percentile(sorted, 90), 1),
        submitToExecutorMinMs: round(sorted[0] as number, 1),
        driverUpP50Ms: round(phase('driverUp'), 1),
        appRegisteredP50Ms: round(phase('appRegistered'), 1),
        executorAddedP50Ms: round(phase('executorAdded'), 1),
        runs,
        cpus: os.cpus().length,
        loadAverage1m: round(Math.max(loadBefore, loadAfter), 2),
      },
      baseline: { nodeStartP50Ms: round(nodeP50, 1), cliVersionP50Ms: round(cliP50, 1) },
      ratios: { submitToExecutorVsNodeStart: round(p50 / nodeP50, 2) },
    });

    const rows: (string | number)[][] = [];
    let prev = 0;
    for (const p of PHASES) {
      const at = phase(p.key);
      rows.push([`  … ${p.label}`, fmt(at, 1), `+${fmt(at - prev, 1)}`]);
      prev = at;
    }
    printTable(
      `submit — ${runs} runs, ms from spawn (medians; phases by the driver's log lines)`,
      ['', 'ms', 'step'],
      [
        ['node -e 0, spawn to exit (baseline)', fmt(nodeP50, 1), ''],
        ['node bin/wick.js --version, spawn to exit', fmt(cliP50, 1), ''],
        ['wick submit → first executor registered (p50)', fmt(p50, 1), ''],
        ...rows,
        ['  p90 / min', `${fmt(percentile(sorted, 90), 1)} / ${fmt(sorted[0] as number, 1)}`, ''],
      ],
    );
    printTable(
      'Goals',
      ['', 'measured', 'goal', ''],
      [['submitToExecutorP50Ms', fmt(p50, 1), `≤ ${GOAL_MS}`, p50 <= GOAL_MS ? 'met' : 'MISSED']],
    );
    console.log(
      `\n${os.cpus().length} CPUs; 1-minute load average ${loadBefore.toFixed(1)} before, ${loadAfter.toFixed(1)} after (process start-up slows down a lot on a busy machine).`,
    );
    console.log(`Wrote ${file}`);
  } finally {
    await stopAll();
  }
}

await runBenchmark('submit', main, WATCHDOG_MS);
