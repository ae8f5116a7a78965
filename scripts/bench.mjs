#!/usr/bin/env node
// Runs benchmarks: bench/NAME.bench.ts with node and tsx, one process each.
// Usage: npm run bench [-- [--smoke] NAME [args for the benchmark...]]
// Without a name every benchmark runs in turn. Each prints a table and writes bench/results/NAME.json.
// --smoke runs them at tiny sizes in seconds (WICK_BENCH_SMOKE=1, bench/lib/args.ts), writing to
// test-output/bench-smoke/ instead: it shows they run, not how fast.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

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

const names = name === undefined ? available : [name];
const failed = [];
for (const n of names) {
  if (names.length > 1) console.log(`\n=== bench ${n} ===`);
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(new URL(`${n}.bench.ts`, benchDir)), ...rest],
    {
      stdio: 'inherit',
      cwd: root,
      env: smoke ? { ...process.env, WICK_BENCH_SMOKE: '1' } : process.env,
    },
  );
  if (r.status !== 0) failed.push(`${n} (${r.status ?? r.signal})`);
}
if (failed.length > 0) {
  console.error(`\nFailed: ${failed.join(', ')}`);
  process.exit(1);
}
