/**
 * Smoke mode: every benchmark runs in seconds at tiny sizes, to show that it still runs and still
 * produces its figures (test/bench/smoke.test.ts runs each in `npm test`), not what they are.
 * `npm run bench -- --smoke [NAME]` sets WICK_BENCH_SMOKE=1 for the benchmarks it runs. Flags
 * given on the command line still win over the smoke sizes, and results go elsewhere (results.ts).
 */
export const SMOKE_ENV = 'WICK_BENCH_SMOKE';
export const smoke = process.env[SMOKE_ENV] === '1';

/** An option's default: the benchmark's own, or its size in smoke mode. */
export function sized(full: string, inSmoke: string): string {
  return smoke ? inSmoke : full;
}

/** A whole-number command-line option of a benchmark, checked: `--name` must be in [min, max]. */
export function int(name: string, raw: string | undefined, min: number, max: number): number {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new Error(`--${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
  }
  return n;
}
