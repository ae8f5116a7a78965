/**
 * Every benchmark still runs: each bench/NAME.bench.ts, found by its file name, runs in smoke mode
 * (`npm run bench -- --smoke NAME`: tiny sizes, seconds; bench/lib/args.ts) as a real process, and
 * must exit 0 having written its results, with figures, all of them finite numbers, and goals
 * (bench/lib/goals.ts) each naming a figure it measured (or saying why it may not), and the runner
 * must print its summary of them. A benchmark that no longer runs, or whose goal names a figure it
 * no longer writes, fails here, not on the next person to run it.
 *
 * Nothing here checks how fast anything is: a smoke run on a shared machine says that a benchmark
 * runs and measures, not what it measures. Results go to a folder of this test, never to
 * bench/results/. Two benchmarks run at a time.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { figureOf, parseGoals } from '../../bench/lib/goals.js';
import { hostsUnavailable } from '../helpers/hosts.js';
import { zooKeeperMissing } from '../helpers/zookeeper.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
/** The longest smoke runs start first, so that two at a time end close together. */
const LONGEST = ['wordcount', 'multihost', 'master'];
const names = readdirSync(join(root, 'bench'))
  .filter((f) => f.endsWith('.bench.ts'))
  .map((f) => f.slice(0, -'.bench.ts'.length))
  .sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));

function rank(name: string): number {
  const i = LONGEST.indexOf(name);
  return i === -1 ? LONGEST.length : i;
}
/** A smoke run takes seconds; this bounds one that hangs (its watchdog is 3 minutes). */
const BENCH_TIMEOUT_MS = 150_000;

const results = mkdtempSync(join(tmpdir(), 'wick-bench-smoke-'));
after(() => rmSync(results, { recursive: true, force: true }));

/** Why a benchmark cannot run here; undefined when it can. */
function cannotRun(name: string): string | undefined {
  switch (name) {
    case 'multihost':
      return hostsUnavailable();
    case 'failover': {
      const why = zooKeeperMissing();
      if (why && process.env.CI) throw new Error(`${why} (CI must install it: see .ci/run)`);
      return why;
    }
    case 'tree':
      // Its measurement is a step of the in-host VS Code suite, minutes of code-server, which
      // test/e2e/vscode.test.ts runs in every `npm test` (and fails on) already.
      return 'tree runs the whole in-host VS Code suite; test/e2e/vscode.test.ts runs it, its tree benchmark step included';
    default:
      return undefined;
  }
}

interface Run {
  code: number | string | null;
  output: string;
  ms: number;
}

/**
 * This process's environment, with the results folder. The benchmarks' daemons log at their own
 * level: some wait for an INFO line (failover for "New state: ALIVE", multihost for the code
 * fetch). And no node:test context: a benchmark is not a test file of this run.
 */
function benchEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, WICK_BENCH_RESULTS_DIR: results };
  delete env.NODE_TEST_CONTEXT;
  delete env.WICK_LOG_LEVEL;
  // Executors confined as users' are (wick.executor.sandbox=auto), not open as this run's test
  // clusters keep them (scripts/test.mjs): the full wordcount bench read its corpus from /tmp,
  // which a confined executor does not see, and only its smoke run passed.
  delete env.WICK_EXECUTOR_SANDBOX;
  delete env.WICK_EXECUTOR_SANDBOX_READ_ONLY_PATHS;
  return env;
}

/** `npm run bench -- --smoke NAME` in its own process group, killed whole if it overruns. */
function runSmoke(name: string): Promise<Run> {
  const t0 = performance.now();
  const child: ChildProcess = spawn(process.execPath, ['scripts/bench.mjs', '--smoke', name], {
    cwd: root,
    env: benchEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  const group = (sig: NodeJS.Signals) => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, sig);
    } catch {
      // Gone already.
    }
  };
  // Should this test process be killed (its file's timeout), the benchmark's group goes with it.
  const watchdog = spawn(
    'sh',
    ['-c', `tail --pid=${process.pid} -f /dev/null; kill -KILL -${child.pid} 2>/dev/null`],
    { detached: true, stdio: 'ignore' },
  );
  watchdog.unref();
  const timer = setTimeout(() => {
    output += `\n[smoke test: no end within ${BENCH_TIMEOUT_MS / 1000} s; stopped]`;
    group('SIGTERM');
    setTimeout(() => group('SIGKILL'), 10_000).unref();
  }, BENCH_TIMEOUT_MS);
  return new Promise((resolve) => {
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      // Whatever the benchmark left behind in its group goes with it.
      group('SIGKILL');
      try {
        if (watchdog.pid !== undefined) process.kill(-watchdog.pid, 'SIGKILL');
      } catch {
        // Gone already.
      }
      resolve({ code: code ?? signal, output, ms: performance.now() - t0 });
    });
  });
}

/** What is wrong with a results file: a missing section, no figures, a value that is no number. */
function resultProblems(file: string): string[] {
  if (!existsSync(file)) return [`it wrote no ${file}`];
  const r = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  const problems: string[] = [];
  for (const section of ['figures', 'baseline', 'ratios']) {
    const values = r[section];
    if (typeof values !== 'object' || values === null || Array.isArray(values)) {
      problems.push(`${section} is not an object of figures`);
      continue;
    }
    for (const [key, v] of Object.entries(values)) {
      if (typeof v !== 'number' || !Number.isFinite(v)) {
        problems.push(`${section}.${key} is ${JSON.stringify(v)}, not a finite number`);
      }
    }
  }
  const figures = r.figures as Record<string, unknown> | undefined;
  if (figures && Object.keys(figures).length === 0) problems.push('figures is empty');
  try {
    const goals = parseGoals(r.goals, file);
    if (goals.length === 0) problems.push('it declares no goals');
    for (const g of goals) {
      if (figureOf(r, g.figure) === undefined && !g.optional) {
        problems.push(`its goal on ${g.figure} names a figure it did not write`);
      }
    }
  } catch (err) {
    problems.push((err as Error).message);
  }
  return problems;
}

// A bound for the whole file, with room for a loaded machine (about 4 minutes at a load of 25 on 2
// cores; each benchmark is stopped after BENCH_TIMEOUT_MS anyway).
const options = { concurrency: 2, timeout: 480_000 };

test('every benchmark runs in smoke mode and writes its figures', options, async (t) => {
  await Promise.all(
    names.map((name) =>
      t.test(name, async (t) => {
        const why = cannotRun(name);
        if (why) {
          t.skip(why);
          return;
        }
        const run = await runSmoke(name);
        t.diagnostic(`${name}: ${(run.ms / 1000).toFixed(1)} s`);
        const tail = run.output.trim().split('\n').slice(-25).join('\n');
        if (run.code !== 0) {
          throw new Error(
            `bench ${name} exited ${run.code} in smoke mode; its output ends:\n${tail}`,
          );
        }
        const problems = resultProblems(join(results, `${name}.json`));
        if (!/^Summary of a SMOKE run/m.test(run.output) || !run.output.includes(`\n${name} `)) {
          problems.push(`the runner printed no summary row of ${name}`);
        }
        if (problems.length > 0) {
          throw new Error(
            `bench ${name} ran but its results are wrong: ${problems.join('; ')}; its output ends:\n${tail}`,
          );
        }
      }),
    ),
  );
});

test('the tree benchmark reads figures the in-host VS Code suite still records', () => {
  // tree is not run above (cannotRun): its figures come from test/e2e's report. Should a name
  // change on one side only, the benchmark would write undefined; this catches it without
  // code-server.
  const bench = readFileSync(join(root, 'bench', 'tree.bench.ts'), 'utf8');
  const suite = readFileSync(join(root, 'test', 'e2e', 'host', 'suite.ts'), 'utf8');
  const read = [...bench.matchAll(/\bf\.(\w+) as number/g)].map((m) => m[1] as string);
  assert.ok(read.length > 0, 'bench/tree.bench.ts reads no figure of the report (f.NAME)');
  const missing = read.filter((name) => !new RegExp(`\\bfigures\\.${name} =`).test(suite));
  assert.deepEqual(
    missing,
    [],
    'figures tree.bench.ts reads that test/e2e/host/suite.ts no longer sets',
  );
});
