import { dirname } from 'node:path';
import { pathToFileURL } from 'node:url';
import { importModule } from '../util/importModule.js';
import { distFile } from '../util/paths.js';

export interface AppRun {
  bundle: string;
  /** The application's code tree (see bundle.ts), which the driver offers its executors. */
  root?: string;
  source: string;
  args: string[];
  master: string;
  appName?: string;
  conf: Record<string, string>;
}

/**
 * Where dist/cli/lib.mjs (the `wick` an application bundle imports; scripts/build.mjs writes it)
 * finds the library the CLI has loaded, so that the application and the CLI share one copy.
 */
export const LIBRARY_KEY = Symbol.for('wick.library');

/**
 * Runs a bundled application in this process, as spark-submit runs the main class in its JVM: the
 * application sees `process.argv` = [node, its file, …its arguments] and finds the master, its
 * name and its settings in the environment that WickContext reads.
 */
export async function runAppHere(run: AppRun): Promise<void> {
  process.env.WICK_MASTER = run.master;
  process.env.WICK_SUBMIT_CONF = JSON.stringify(run.conf);
  process.env.WICK_APP_DIR = dirname(run.source);
  if (run.root) process.env.WICK_APP_CODE = run.root;
  process.env.WICK_CLI ??= distFile('wick.cjs');
  if (run.appName) process.env.WICK_APP_NAME = run.appName;
  const global = globalThis as { [LIBRARY_KEY]?: unknown };
  global[LIBRARY_KEY] ??= await import('../app/index.js');
  process.argv = [process.argv[0] as string, run.source, ...run.args];
  await importModule(pathToFileURL(run.bundle).href);
}
