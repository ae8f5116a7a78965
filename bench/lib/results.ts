import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { smoke } from './args.js';
import type { Goal } from './goals.js';

/** What every benchmark writes to bench/results/NAME.json. */
export interface BenchResult {
  /** The benchmark's goals (goals.ts), declared in its file, for the runner's summary. */
  goals: readonly Goal[];
  figures: Record<string, number>;
  baseline: Record<string, number>;
  ratios: Record<string, number>;
}

/** Where results go, so that a smoke run never overwrites a real run's bench/results/. */
export const RESULTS_DIR_ENV = 'WICK_BENCH_RESULTS_DIR';

/** The results folder of a run, smoke or not (the runner asks for it to read what was written). */
export function resultsDirFor(inSmoke: boolean): string {
  const given = process.env[RESULTS_DIR_ENV];
  if (given) return given;
  const root = fileURLToPath(new URL('../../', import.meta.url));
  return inSmoke ? join(root, 'test-output', 'bench-smoke') : join(root, 'bench', 'results');
}

/**
 * Writes NAME.json to bench/results/ (test-output/bench-smoke/ in smoke mode, or the folder in
 * WICK_BENCH_RESULTS_DIR) and returns its path.
 */
export function writeResults(name: string, result: BenchResult): string {
  const dir = resultsDirFor(smoke);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${name}.json`);
  writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  return file;
}
