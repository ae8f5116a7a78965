import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** What every benchmark writes to bench/results/NAME.json. */
export interface BenchResult {
  figures: Record<string, number>;
  baseline: Record<string, number>;
  ratios: Record<string, number>;
}

const resultsDir = fileURLToPath(new URL('../results/', import.meta.url));

/** Writes bench/results/NAME.json and returns its path. */
export function writeResults(name: string, result: BenchResult): string {
  mkdirSync(resultsDir, { recursive: true });
  const file = `${resultsDir}${name}.json`;
  writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  return file;
}
