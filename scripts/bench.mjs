#!/usr/bin/env node
// Runs benchmarks: bench/NAME.bench.ts with node and tsx, one process each.
// Usage: npm run bench [-- [--smoke] NAME [args for the benchmark...]]
// Without a name every benchmark runs in turn. Each prints a table and writes bench/results/NAME.json.
// --smoke runs them at tiny sizes in seconds (WICK_BENCH_SMOKE=1, bench/lib/args.ts), writing to
// test-output/bench-smoke/ instead: it shows they run, not how fast.
// At the end comes one table of every goal of the benchmarks that ran (bench/lib/summary.ts), with
// the machine's load average sampled while each ran; a run of all of them also writes it to
// summary.json beside the results. docs/benchmarks.md says how to read it.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tsImport } from 'tsx/esm/api';

const root = fileURLToPath(new URL('..', import.meta.url));
const benchDir = new URL('../bench/', import.meta.url);
const available = readdirSync(benchDir)
  .filter((f) => f.endsWith('.bench.ts'))
  .map((f) => f.slice(0, -'.bench.ts'.length))
  .sort();

const argv = process.argv.slice(2);
const smoke = argv[0] === '--smoke';
const [name, ...rest] = smoke ? argv.slice(1) : argv;
if (name !== undefined && !available.includes(name)) {
  console.error(`Unknown benchmark "${name}". Available: ${available.join(', ') || '(none)'}`);
  console.error('Usage: npm run bench [-- [--smoke] NAME [args...]]');
  process.exit(1);
}

const { buildSummary, formatSummary } = await tsImport('../bench/lib/summary.ts', import.meta.url);
const { resultsDirFor } = await tsImport('../bench/lib/results.ts', import.meta.url);
const resultsDir = resultsDirFor(smoke);

/** Runs one benchmark, sampling the 1-minute load average every second while it runs. */
function runOne(n) {
  const samples = [os.loadavg()[0]];
  const timer = setInterval(() => samples.push(os.loadavg()[0]), 1000);
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(new URL(`${n}.bench.ts`, benchDir)), ...rest],
    {
      stdio: 'inherit',
      cwd: root,
      env: smoke ? { ...process.env, WICK_BENCH_SMOKE: '1' } : process.env,
    },
  );
  // A terminal's Ctrl-C reaches the benchmark too, which stops what it started; the runner waits
  // for that, passes a SIGTERM on, and runs no further benchmark.
  const onInt = () => {
    interrupted = true;
  };
  const onTerm = () => {
    interrupted = true;
    child.kill('SIGTERM');
  };
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  return new Promise((resolve) => {
    child.once('exit', (code, signal) => {
      clearInterval(timer);
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
      samples.push(os.loadavg()[0]);
      const load = {
        mean: samples.reduce((a, b) => a + b, 0) / samples.length,
        max: Math.max(...samples),
      };
      resolve({ exit: code ?? signal, load });
    });
  });
}

/** The benchmark's results file, if it wrote it since `since` (ms): an older one is not this run's. */
function resultsOf(n, since) {
  const file = join(resultsDir, `${n}.json`);
  if (!existsSync(file) || statSync(file).mtimeMs < since) return undefined;
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
}

let interrupted = false;
const startedAt = new Date().toISOString();
const names = name === undefined ? available : [name];
const outcomes = [];
for (const n of names) {
  if (names.length > 1) console.log(`\n=== bench ${n} ===`);
  // File times have a coarser clock than Date.now() on some file systems.
  const since = Date.now() - 1000;
  const { exit, load } = await runOne(n);
  outcomes.push({ name: n, exit, load, results: resultsOf(n, since) });
  if (interrupted) break;
}

const described = spawnSync('git', ['describe', '--always', '--dirty'], {
  cwd: root,
  encoding: 'utf8',
});
const commit = described.status === 0 ? described.stdout.trim() : undefined;
const summary = buildSummary(outcomes, { smoke, cpus: os.cpus().length, startedAt, commit });
console.log(`\n${formatSummary(summary)}`);
if (name === undefined && !interrupted) {
  mkdirSync(resultsDir, { recursive: true });
  const file = join(resultsDir, 'summary.json');
  writeFileSync(file, `${JSON.stringify(summary, null, 2)}\n`);
  console.log(`Wrote ${file}`);
}
const failed = outcomes.filter((o) => o.exit !== 0).map((o) => `${o.name} (${o.exit})`);
if (failed.length > 0) {
  console.error(`\nFailed: ${failed.join(', ')}`);
  process.exit(1);
}
