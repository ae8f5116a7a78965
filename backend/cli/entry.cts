// dist/wick.cjs: the path every launcher knows (bin/wick.js, workers' executor commands, the
// extension's agent). It runs the command's CLI bundle (dist/cli/main.cjs, or one of a command's
// own: commandNames.ts, OWN_BUNDLES) through the compile cache.
import { join } from 'node:path';
import { setTaskThreadV8Flags } from '../app/executor/taskThreadFlags.js';
import { compileCacheDir, compileCacheKey, runBundle } from '../util/compileCache.js';
import { ALL_COMMAND_NAMES, COMMAND_NAMES, cliBundleOf } from './commandNames.js';
import { maskStartupSecrets } from './startupSecrets.js';

/** Set by scripts/build.mjs, the same in every bundle of one build. */
declare const WICK_BUILD_ID: string;

// First, before the CLI bundle's load (most of a command's start) gives anyone longer to read it.
maskStartupSecrets();
const key = compileCacheKey(process.argv, ALL_COMMAND_NAMES);
const bundle = join(__dirname, 'cli', cliBundleOf(key));
// Before compiling: V8's flags are part of what a code cache must match (see taskThreadFlags.ts).
if ((COMMAND_NAMES.executor as readonly string[]).includes(key)) setTaskThreadV8Flags();
try {
  runBundle(
    bundle,
    { dir: compileCacheDir(), key, build: WICK_BUILD_ID },
    // Compiled here, by Node, so that import() keeps its context (see runBundle).
    (specifier) => import(specifier),
  );
} catch (err) {
  console.error(`wick: cannot load ${bundle}: ${(err as Error).message}`);
  process.exit(1);
}
