import { dirname, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { formatFailure, wickCode } from '../app/driver/appFailure.js';
import { WickContext } from '../app/driver/WickContext.js';
import { APP_CODE_ENV, APP_DIR_ENV, APP_NAME_ENV, SUBMIT_CONF_ENV } from '../protocol/childEnv.js';
import { parseStackFrames } from '../shared/stackFrames.js';
import { importModule } from '../util/importModule.js';
import { distFile } from '../util/paths.js';
import { offerModuleApi } from '../util/shippedCode.js';

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
  process.env[SUBMIT_CONF_ENV] = JSON.stringify(run.conf);
  process.env[APP_DIR_ENV] = dirname(run.source);
  if (run.root) process.env[APP_CODE_ENV] = run.root;
  process.env.WICK_CLI ??= distFile('wick.cjs');
  if (run.appName) process.env[APP_NAME_ENV] = run.appName;
  const global = globalThis as { [LIBRARY_KEY]?: unknown };
  global[LIBRARY_KEY] ??= await import('../app/index.js');
  process.argv = [process.argv[0] as string, run.source, ...run.args];
  // The tree's modules carry inline source maps (compileModules.ts): the driver's stacks then
  // name the user's .ts file and line, not the compiled copy in a temp folder. Wick's own
  // bundle, loaded before this, keeps its frames as they are (and its 4 MB map unread).
  process.setSourceMapsEnabled(true);
  // For the require banner of the tree's modules, on a Node that lacks process.getBuiltinModule.
  offerModuleApi();
  const uncaught = (err: unknown) => void failed(err).then(() => process.exit(1));
  process.on('uncaughtException', uncaught);
  process.on('unhandledRejection', uncaught);
  // Killed (wick kill driver-…, a worker's shutdown, the launcher going away): the application
  // did not finish; it ends KILLED, not FAILED (nothing in it went wrong), saying so before the
  // process ends as a SIGTERM would end it.
  process.once('SIGTERM', () => {
    void failed(
      new Error('the driver received SIGTERM (it was killed, or whoever started it stopped)'),
      true,
    ).finally(() => process.exit(143));
  });
  try {
    await importModule(pathToFileURL(run.bundle).href);
  } catch (err) {
    await failAll(err);
    throw new DriverFailed(err);
  }
}

/** Ends the running applications FAILED; the driver's sockets do not keep the process alive. */
async function failAll(err: unknown, killed = false): Promise<void> {
  const keep = setInterval(() => {}, 1 << 30);
  try {
    await WickContext.failAll(err, killed);
  } finally {
    clearInterval(keep);
  }
}

/**
 * The application threw: the error as the driver prints it (`wick: <name>: <message>` and its
 * source-mapped stack, docs/protocol.md), its applications ended FAILED first. An Error that
 * Wick threw about what it was given (no master answered, a bad setting) prints its message
 * alone, which says what was wrong: its stack is Wick's, and comes with --verbose or WICK_DEBUG
 * (as `stack`).
 */
export class DriverFailed extends Error {
  constructor(readonly error: unknown) {
    super(wicksOwn(error) ? (error as Error).message : formatFailure(error), { cause: error });
    this.name = 'DriverFailed';
    this.stack = formatFailure(error);
  }
}

/** A plain Error thrown in Wick's own code (its first frame), not a user's or a job's failure. */
function wicksOwn(err: unknown): boolean {
  if (!(err instanceof Error) || err.name !== 'Error' || !err.stack) return false;
  const head = `${err.name}: ${err.message}`;
  const frames = err.stack.startsWith(head) ? err.stack.slice(head.length) : err.stack;
  const [first] = parseStackFrames(frames);
  return first !== undefined && wickCode().dirs.some((d) => first.file.startsWith(`${d}${sep}`));
}
let failing = false;

/** An error nobody caught, outside the main module's own run: report it once, print it. */
async function failed(err: unknown, killed = false): Promise<void> {
  if (failing) return;
  failing = true;
  try {
    await failAll(err, killed);
  } finally {
    process.stderr.write(`wick: ${formatFailure(err)}\n`);
  }
}
