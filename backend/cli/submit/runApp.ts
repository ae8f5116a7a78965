import { dirname } from 'node:path';
import { pathToFileURL } from 'node:url';
import { distFile } from '../../util/paths.js';

export interface AppRun {
  bundle: string;
  source: string;
  args: string[];
  master: string;
  appName?: string;
  conf: Record<string, string>;
}

/**
 * Runs a bundled application in this process, as spark-submit runs the main class in its JVM: the
 * application sees `process.argv` = [node, its file, …its arguments] and finds the master, its
 * name and its settings in the environment that WickContext reads.
 */
export async function runAppHere(run: AppRun): Promise<void> {
  process.env.WICK_MASTER = run.master;
  process.env.WICK_SUBMIT_CONF = JSON.stringify(run.conf);
  process.env.WICK_APP_DIR = dirname(run.source);
  process.env.WICK_CLI ??= distFile('wick.cjs');
  if (run.appName) process.env.WICK_APP_NAME = run.appName;
  process.argv = [process.argv[0] as string, run.source, ...run.args];
  await import(pathToFileURL(run.bundle).href);
}
