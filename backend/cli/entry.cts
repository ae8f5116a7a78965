// dist/wick.cjs: the path every launcher knows (bin/wick.js, workers' executor commands, the
// extension's agent). It runs the CLI bundle, dist/cli/main.cjs, through the compile cache.
import { join } from 'node:path';
import { ALL_COMMAND_NAMES } from './commandNames.js';
import { compileCacheDir, compileCacheKey, runBundle } from './compileCache.js';

const bundle = join(__dirname, 'cli', 'main.cjs');
try {
  runBundle(
    bundle,
    { dir: compileCacheDir(), key: compileCacheKey(process.argv, ALL_COMMAND_NAMES) },
    // Compiled here, by Node, so that import() keeps its context (see runBundle).
    (specifier) => import(specifier),
  );
} catch (err) {
  console.error(`wick: cannot load ${bundle}: ${(err as Error).message}`);
  process.exit(1);
}
