import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * A file of Wick's build (dist/): next to the running bundle when Wick runs from dist/, else in
 * the repository's dist/ (when running from sources, as the tests do). WICK_DIST overrides both.
 */
export function distFile(name: string): string {
  const candidates: string[] = [];
  if (process.env.WICK_DIST) candidates.push(join(process.env.WICK_DIST, name));
  // dist/wick.cjs and dist/wick-lib.cjs sit in dist/; the CLI bundle in dist/cli/.
  if (typeof __dirname !== 'undefined')
    candidates.push(join(__dirname, name), join(__dirname, '..', name));
  try {
    candidates.push(join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist', name));
  } catch {
    // In the CommonJS bundle import.meta.url is empty; __dirname covered it.
  }
  const found = candidates.find((p) => existsSync(p));
  if (!found) {
    throw new Error(
      `Cannot find ${name} of Wick's build (looked in ${candidates.join(', ')}); run \`npm run build\``,
    );
  }
  return found;
}
