import { closeSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { madeLogs } from '../../logs/madeLogs.js';
import { APP_CREDENTIAL_ENV } from '../../rpc/credentials.js';
import type { RollingConf } from '../logs/RollingFileAppender.js';
import { launchRolling } from './launchRolling.js';

/**
 * Starts one child for a worker: its stdout and stderr go straight to files in its directory (the
 * child writes them itself, so nothing is buffered in the worker and nothing is lost if the worker
 * dies), stderr after a header naming the command. The child leads a new process group, and
 * carries a marker in its environment that its descendants inherit, so that kill.ts can find
 * every process it ever started.
 */
export interface LaunchSpec {
  argv: readonly string[];
  cwd: string;
  env: Record<string, string>;
  /** The first line of the stderr header, e.g. `Wick Executor Command: "node" "x.js"`. */
  header: string;
  /** Append to stdout/stderr instead of truncating (a supervised driver's relaunch). */
  append?: boolean;
  /**
   * `argv` already wrapped in bwrap (sandbox/): its root is bwrap, whose death kills the whole
   * sandbox at once, so a kill sends SIGTERM to the processes inside first (kill.ts).
   */
  sandboxed?: boolean;
  /** wick.executor.logs.rolling.*: output through the worker, rolled (launchRolling.ts). */
  rolling?: RollingConf;
}

export interface Launched {
  pid: number;
  /** The marker value its descendants carry in WICK_PROCESS_MARKER. */
  marker: string;
  /** Its root is bwrap (LaunchSpec.sandboxed). */
  sandboxed?: boolean;
  /** Resolves when the child exits: its exit code, or the signal that ended it. */
  exited: Promise<{ exitCode: number | undefined; signal: string | undefined }>;
}

export const MARKER_VAR = 'WICK_PROCESS_MARKER';

let counter = 0;

/** A marker value no other child of this worker carries. */
export function newMarker(): string {
  return `${process.pid}-${Date.now().toString(36)}-${++counter}`;
}

/**
 * Spawns `file args` as the worker starts every child: leading a new process group, carrying
 * `marker` in its environment, stdout and stderr to the open files `out` and `err`.
 */
export function spawnMarked<S extends 'ignore' | 'pipe'>(
  file: string,
  args: readonly string[],
  o: {
    cwd: string;
    env: Record<string, string>;
    marker: string;
    stdin: S;
    /** Open file descriptors, or 'pipe' for output the worker reads (rolled logs). */
    out: number | 'pipe';
    err: number | 'pipe';
  },
) {
  // execa takes a file descriptor at run time, but its types only accept number literals.
  type Fd = 3;
  return execa(file, args, {
    cwd: o.cwd,
    env: { ...inheritedEnv(), ...o.env, [MARKER_VAR]: o.marker },
    extendEnv: false,
    stdin: o.stdin,
    stdout: o.out as Fd,
    stderr: o.err as Fd,
    buffer: false,
    reject: false,
    detached: true,
    // The worker kills its children itself (whole trees, with a grace period) on shutdown.
    cleanup: false,
    windowsHide: true,
  });
}

export function launch(spec: LaunchSpec): Launched {
  if (spec.rolling) return launchRolling(spec, spec.rolling);
  const flags = spec.append ? 'a' : 'w';
  const out = openSync(join(spec.cwd, 'stdout'), flags);
  const err = openSync(join(spec.cwd, 'stderr'), flags);
  madeLogs.record(join(spec.cwd, 'stdout'), out);
  madeLogs.record(join(spec.cwd, 'stderr'), err);
  const marker = newMarker();
  try {
    writeSync(err, `${spec.header}\n${'='.repeat(40)}\n\n`);
    const [file, ...args] = spec.argv as [string, ...string[]];
    const child = spawnMarked(file, args, {
      cwd: spec.cwd,
      env: spec.env,
      marker,
      stdin: 'ignore',
      out,
      err,
    });
    return launched(spec, marker, child.pid, child);
  } finally {
    // The child has its own copies of the descriptors.
    closeSync(out);
    closeSync(err);
  }
}

/** How an execa child ended: what launch() reports, and a spawn's failure when it never ran. */
interface ChildEnd {
  exitCode?: number | undefined;
  signal?: string | undefined;
  failed?: boolean;
  originalMessage?: string;
  message?: string;
}

/**
 * What a launch returns once the child is spawned (`pid` undefined: it could not be, and execa
 * says why through `ended`); `ended` resolves when its exit may be reported.
 */
export function launched(
  spec: LaunchSpec,
  marker: string,
  pid: number | undefined,
  ended: PromiseLike<ChildEnd>,
): Launched {
  if (pid === undefined) {
    return {
      pid: -1,
      marker,
      exited: Promise.resolve(ended).then((r) => {
        throw new Error(spawnFailure(spec.argv, r));
      }),
    };
  }
  return {
    pid,
    marker,
    sandboxed: spec.sandboxed,
    exited: Promise.resolve(ended).then((r) => ({ exitCode: r.exitCode, signal: r.signal })),
  };
}

export function spawnFailure(
  argv: readonly string[],
  failure: { originalMessage?: string; message?: string } | undefined,
): string {
  const why = failure?.originalMessage || failure?.message || 'unknown error';
  return `Failed to start ${argv[0]}: ${why}`;
}

/**
 * The worker's environment, as its children inherit it: without the cluster secret (nor a key the
 * worker itself was handed), which no application's process may hold. Each child gets the key of
 * its own application instead (RunnerHost.credentialEnv).
 */
export function inheritedEnv(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    if (v !== undefined && !WITHHELD.has(k)) out[k] = v;
  }
  return out;
}

const WITHHELD = new Set(['WICK_AUTH_SECRET', APP_CREDENTIAL_ENV]);
