/** Whether a folder already gets types for 'wick' (its own setup, a dependency, or Wick itself). */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TYPES_DIR } from './projectTypes.js';

/** An import of 'wick' in a JS/TS source (ES import, export-from, dynamic import, require). */
export function importsWick(text: string): boolean {
  return /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|^\s*import\s+)['"]wick['"]/m.test(text);
}

export function resolvesWick(folder: string): boolean {
  if (existsSync(join(folder, TYPES_DIR, 'wick', 'index.d.ts'))) return true;
  if (existsSync(join(folder, 'node_modules', 'wick'))) return true;
  try {
    const pkg = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')) as {
      name?: string;
    };
    // Wick's own repository: its examples import the package by its own name.
    return pkg.name === 'wick';
  } catch {
    return false;
  }
}
