/**
 * Benchmark `multihost`: the same jobs on simulated hosts (a master, two workers and the user's
 * machine, each a network namespace with its own /tmp and ~/.cache: test/helpers/hosts.ts) and on
 * one host (the master, both workers and the submit in one namespace), alternating, in one run.
 *
 * - SparkPi (examples/pi.ts, `--slices`): wall time of `wick submit` from spawn to exit, compile
 *   and code fetch included (no host has a bundle cache: each process gets a fresh ~/.cache).
 * - Many tasks (bench/apps/manyTasks.ts, `--tasks` tiny tasks): the job's own time, as the app
 *   measures it, after a first job brought its executors up.
 * - App start on workers that never saw the app: `wick submit` of SparkPi to a fresh cluster of
 *   hosts (each worker fetches the app's code from the driver) against the next submit of the same
 *   app to the same cluster, and the executors' own "Fetched the application's code … in T ms".
 *
 * Ratios: one host ÷ many hosts for each job (goal ≥ 0.9: the network between hosts costs at most
 * a tenth), first ÷ second start (goal ≤ 1.2). Writes bench/results/multihost.json. Needs root
 * (network namespaces), as the tests do.
 *
 *   npm run bench -- multihost [--runs 3] [--slices 20] [--tasks 2000]
 */
import type { TestContext } from 'node:test';
import { parseArgs } from 'node:util';
import { type Host, hostsUnavailable, startHosts } from '../test/helpers/hosts.js';
import { sized } from './lib/args.js';
import type { Goal } from './lib/goals.js';
import { writeResults } from './lib/results.js';
import { median, round } from './lib/stats.js';
import { fmt, printTable } from './lib/table.js';

/** The network between hosts costs at most a tenth; a second start reuses the first's code. */
const goals: Goal[] = [
  { figure: 'ratios.piOneOverMany', op: '>=', value: 0.9, what: 'pi: one host ÷ many' },
  { figure: 'ratios.tasksOneOverMany', op: '>=', value: 0.9, what: 'tasks: one host ÷ many' },
  { figure: 'ratios.firstOverSecondStart', op: '<=', value: 1.2, what: 'first ÷ second start' },
];

const { values: opts } = parseArgs({
  options: {
    runs: { type: 'string', default: sized('3', '1') },
    slices: { type: 'string', default: sized('20', '2') },
    tasks: { type: 'string', default: sized('2000', '50') },
  },
  strict: true,
});
const runs = wholeNumber('--runs', opts.runs, 1, 50);
const slices = wholeNumber('--slices', opts.slices, 1, 10_000);
const tasks = wholeNumber('--tasks', opts.tasks, 1, 100_000);

function wholeNumber(flag: string, raw: string, min: number, max: number): number {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new Error(`${flag} must be a whole number from ${min} to ${max}, got "${raw}"`);
  return n;
}

/** What startHosts needs of a test: somewhere to register its cleanup. */
function benchContext(): { t: TestContext; cleanup: () => Promise<void> } {
  const hooks: (() => unknown)[] = [];
  const t = { after: (fn: () => unknown) => hooks.push(fn) } as unknown as TestContext;
  return {
    t,
    cleanup: async () => {
      for (const h of hooks.reverse()) await h();
    },
  };
}

interface Layout {
  name: string;
  /** Where the submit runs. */
  user: Host;
  url: string;
  workerHosts: Host[];
}

async function multiHost(t: TestContext): Promise<Layout> {
  const net = await startHosts(t, ['master', 'w1', 'w2', 'user']);
  const master = await net.host('master').startMaster();
  for (const w of ['w1', 'w2']) await net.host(w).startWorker(master.url, { cores: 1 });
  return {
    name: 'many hosts',
    user: net.host('user'),
    url: master.url,
    workerHosts: [net.host('w1'), net.host('w2')],
  };
}

async function oneHost(t: TestContext): Promise<Layout> {
  const net = await startHosts(t, ['solo']);
  const solo = net.host('solo');
  const master = await solo.startMaster();
  await solo.startWorker(master.url, { cores: 1 });
  await solo.startWorker(master.url, { cores: 1 });
  return { name: 'one host', user: solo, url: master.url, workerHosts: [solo] };
}

async function submit(
  l: Layout,
  args: string[],
): Promise<{ ms: number; stdout: string; stderr: string }> {
  const started = performance.now();
  const r = await l.user.wick(['submit', '--master', l.url, ...args], { timeoutMs: 300_000 });
  const ms = performance.now() - started;
  if (r.code !== 0) throw new Error(`${l.name}: submit ${args.join(' ')} failed: ${r.stderr}`);
  return { ms, stdout: r.stdout, stderr: r.stderr };
}

/** What each executor of the app the submit ran logged of its code fetch (ms). */
async function fetchMs(l: Layout, submitStderr: string): Promise<number[]> {
  const appId = /app ID (app-\S+)/.exec(submitStderr)?.[1];
  if (!appId) throw new Error(`no app ID in ${submitStderr}`);
  const app = await l.user.wick(['status', '--json', '--master', l.url, appId]);
  const ids = (JSON.parse(app.stdout) as { removedExecutors: { id: number }[] }).removedExecutors;
  const out: number[] = [];
  for (const e of ids) {
    const log = await l.user.wick(['logs', '--master', l.url, `${appId}/${e.id}`, '--stderr']);
    const m = /Fetched the application's code .* in (\d+) ms/.exec(log.stdout);
    if (m) out.push(Number(m[1]));
  }
  return out;
}

async function main(): Promise<void> {
  const why = hostsUnavailable();
  if (why) throw new Error(`multihost benchmark: ${why}`);
  const pi: Record<string, number[]> = { 'many hosts': [], 'one host': [] };
  const job: Record<string, number[]> = { 'many hosts': [], 'one host': [] };
  const firstStart: number[] = [];
  const secondStart: number[] = [];
  const oneHostFirst: number[] = [];
  const oneHostSecond: number[] = [];
  const fetches: number[] = [];
  for (let run = 0; run < runs; run++) {
    for (const make of run % 2 === 0 ? [multiHost, oneHost] : [oneHost, multiHost]) {
      const { t, cleanup } = benchContext();
      try {
        const l = await make(t);
        const first = await submit(l, ['examples/pi.ts', String(slices)]);
        if (l.name === 'many hosts') {
          firstStart.push(first.ms);
          fetches.push(...(await fetchMs(l, first.stderr)));
        }
        const second = await submit(l, ['examples/pi.ts', String(slices)]);
        if (l.name === 'many hosts') secondStart.push(second.ms);
        else {
          oneHostFirst.push(first.ms);
          oneHostSecond.push(second.ms);
        }
        (pi[l.name] as number[]).push(second.ms);
        const many = await submit(l, ['bench/apps/manyTasks.ts', String(tasks)]);
        const ms = Number(/JOB_MS (\S+)/.exec(many.stdout)?.[1]);
        if (!Number.isFinite(ms)) throw new Error(`no JOB_MS in ${many.stdout}`);
        (job[l.name] as number[]).push(ms);
        console.error(
          `run ${run + 1}/${runs} ${l.name}: pi ${fmt(second.ms)} ms, ${tasks} tasks ${fmt(ms)} ms`,
        );
      } finally {
        await cleanup();
      }
    }
  }
  const m = (xs: number[]) => round(median(xs), 1);
  const figures = {
    piManyHostsMs: m(pi['many hosts'] as number[]),
    tasksManyHostsMs: m(job['many hosts'] as number[]),
    firstStartMs: m(firstStart),
    secondStartMs: m(secondStart),
    codeFetchMs: fetches.length ? m(fetches) : Number.NaN,
  };
  const baseline = {
    piOneHostMs: m(pi['one host'] as number[]),
    tasksOneHostMs: m(job['one host'] as number[]),
    // The same first and second submits with every process on one host: what a first run costs
    // besides fetching over the network (workers' and executors' first use of their code).
    firstStartOneHostMs: m(oneHostFirst),
    secondStartOneHostMs: m(oneHostSecond),
  };
  const ratios = {
    piOneOverMany: round(baseline.piOneHostMs / figures.piManyHostsMs, 3),
    tasksOneOverMany: round(baseline.tasksOneHostMs / figures.tasksManyHostsMs, 3),
    firstOverSecondStart: round(figures.firstStartMs / figures.secondStartMs, 3),
    firstOverSecondStartOneHost: round(
      baseline.firstStartOneHostMs / baseline.secondStartOneHostMs,
      3,
    ),
  };
  printTable(
    `multihost: medians of ${runs} runs (SparkPi ${slices} slices; ${tasks} tiny tasks)`,
    ['', 'many hosts', 'one host', 'one ÷ many (goal ≥ 0.9)'],
    [
      [
        'SparkPi submit → exit, ms',
        fmt(figures.piManyHostsMs),
        fmt(baseline.piOneHostMs),
        fmt(ratios.piOneOverMany, 3),
      ],
      [
        'many tasks, job ms',
        fmt(figures.tasksManyHostsMs),
        fmt(baseline.tasksOneHostMs),
        fmt(ratios.tasksOneOverMany, 3),
      ],
    ],
  );
  printTable(
    'app start: the first submit to a fresh cluster (workers that never saw the app), then the same again',
    [
      '',
      'first submit ms',
      'second submit ms',
      'first ÷ second (goal ≤ 1.2)',
      "executors' code fetch ms",
    ],
    [
      [
        'many hosts',
        fmt(figures.firstStartMs),
        fmt(figures.secondStartMs),
        fmt(ratios.firstOverSecondStart, 3),
        fmt(figures.codeFetchMs, 1),
      ],
      [
        'one host',
        fmt(baseline.firstStartOneHostMs),
        fmt(baseline.secondStartOneHostMs),
        fmt(ratios.firstOverSecondStartOneHost, 3),
        '',
      ],
    ],
  );
  console.log(`\nwrote ${writeResults('multihost', { goals, figures, baseline, ratios })}`);
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
