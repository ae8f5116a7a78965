/**
 * Starts one daemon in the background, as Spark's `spark-daemon.sh start` does: refuses when the
 * pid file names a running copy, clears a stale pid file, rotates the previous logs, starts the
 * daemon detached (its own session, stdin from /dev/null, stdout and stderr appended to the log
 * file), writes its pid file, and then — unlike spark-daemon.sh, which sleeps 2 s and looks
 * whether the process is still there — waits for the daemon's own word that it serves
 * (`--print-ready`'s JSON line, written into the log) or for its exit, and says which.
 *
 * The cluster secret, when the launcher holds it, reaches the daemon through a pipe on its file
 * descriptor 3 (`--secret-fd 3`), read once at start-up: it is never on the daemon's command
 * line, nor in its environment, nor in its log (the launcher removes WICK_AUTH_SECRET from the
 * environment it hands on).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync, statSync, writeSync } from 'node:fs';
import type { Writable } from 'node:stream';
import { distFile } from '../../util/paths.js';
import {
  type DaemonDirs,
  type DaemonFiles,
  type DaemonKind,
  daemonFiles,
  ensureDirs,
  rotateLog,
} from './daemonFiles.js';
import { readPidFile, removePidFile, runningDaemon, writePidFile } from './pidFile.js';

export interface StartDaemonOptions {
  kind: DaemonKind;
  instance: number;
  /** The daemon's arguments after its command (`wick master …`), without --print-ready. */
  args: readonly string[];
  dirs: DaemonDirs;
  env: NodeJS.ProcessEnv;
  /** Given to the daemon on fd 3; undefined: it finds its secret itself (conf, secret file). */
  secret?: string;
  startTimeoutMs: number;
  /** Where `wick` is: [node, cli]. */
  command?: readonly string[];
  /** Told each thing done on the way (a stale pid file removed). */
  note?: (line: string) => void;
}

export interface StartedDaemon {
  files: DaemonFiles;
  pid: number;
  /**
   * The daemon's ready line: the master's {url, webUiUrl}, the worker's {address, workerId,
   * webUiUrl}, the history server's {url, logDir}.
   */
  ready: Record<string, unknown>;
}

/** A start refused or failed; the message is what the user reads. */
export class DaemonStartError extends Error {}

export async function startDaemon(o: StartDaemonOptions): Promise<StartedDaemon> {
  const files = daemonFiles(o.dirs, o.kind, o.instance);
  ensureDirs(o.dirs);
  const running = runningDaemon(files.pidFile, o.kind);
  if (running !== undefined) {
    throw new DaemonStartError(`${files.label} running as process ${running}. Stop it first.`);
  }
  const stale = readPidFile(files.pidFile);
  removePidFile(files.pidFile);
  if (stale !== undefined) {
    o.note?.(
      `removed stale pid file ${files.pidFile} (process ${stale} is not a running wick ${o.kind})`,
    );
  }
  rotateLog(files.logFile, o.dirs.logMaxFiles);

  const [node, cli] = o.command ?? [process.execPath, distFile('wick.cjs')];
  const argv = [cli as string, o.kind, ...o.args, '--print-ready'];
  if (o.secret !== undefined) argv.push('--secret-fd', '3');
  const log = openSync(files.logFile, 'a', 0o644);
  let child: ChildProcess;
  try {
    // Spark's log opens with the command; no secret is on it.
    writeSync(log, `Wick Command: ${[node, ...argv].map((a) => JSON.stringify(a)).join(' ')}\n`);
    writeSync(log, `${'='.repeat(40)}\n`);
    const env = { ...o.env };
    delete env.WICK_AUTH_SECRET;
    child = spawn(node as string, argv, {
      detached: true,
      env,
      stdio: ['ignore', log, log, o.secret !== undefined ? 'pipe' : 'ignore'],
    });
  } finally {
    closeSync(log);
  }
  const spawned = await new Promise<number>((resolve, reject) => {
    child.once('spawn', () => resolve(child.pid as number));
    child.once('error', (err) =>
      reject(new DaemonStartError(`failed to launch ${node}: ${err.message}`, { cause: err })),
    );
  });
  writePidFile(files.pidFile, spawned);
  const fd3 = child.stdio[3] as Writable | null | undefined;
  if (o.secret !== undefined && fd3) {
    // A daemon that died before reading gives EPIPE here: its exit is reported below instead.
    fd3.on('error', () => {});
    fd3.end(`${o.secret}\n`);
  }
  try {
    const ready = await waitForReady(child, files, o.kind, o.startTimeoutMs);
    return { files, pid: spawned, ready };
  } catch (err) {
    try {
      process.kill(-spawned, 'SIGKILL');
    } catch {
      // Gone already.
    }
    removePidFile(files.pidFile);
    throw err;
  } finally {
    child.unref();
    fd3?.destroy();
  }
}

/** How often the log is read for the ready line: a daemon starts in about a second. */
const POLL_MS = 100;

function waitForReady(
  child: ChildProcess,
  files: DaemonFiles,
  kind: DaemonKind,
  timeoutMs: number,
): Promise<Record<string, unknown>> {
  // The field every ready line of its kind has: the worker's id, else the URL it serves.
  const field = kind === 'worker' ? 'workerId' : 'url';
  return new Promise((resolve, reject) => {
    let done = false;
    const finish = (f: () => void) => {
      if (done) return;
      done = true;
      clearInterval(poll);
      clearTimeout(guard);
      child.off('exit', onExit);
      f();
    };
    const check = () => {
      const ready = readyLine(files.logFile, field);
      if (ready) finish(() => resolve(ready));
    };
    const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
      check();
      finish(() =>
        reject(
          new DaemonStartError(
            `failed to launch ${files.label}: it exited (${code ?? signal}) before serving\n${tail(files.logFile)}\nfull log in ${files.logFile}`,
          ),
        ),
      );
    };
    const poll = setInterval(check, POLL_MS);
    const guard = setTimeout(() => {
      check();
      finish(() =>
        reject(
          new DaemonStartError(
            `failed to launch ${files.label}: it did not say it was serving within ${timeoutMs / 1000} s (wick.daemon.startTimeout); stopped it\n${tail(files.logFile)}\nfull log in ${files.logFile}`,
          ),
        ),
      );
    }, timeoutMs);
    child.on('exit', onExit);
    check();
  });
}

/** The daemon's --print-ready line in its log, once written. */
function readyLine(logFile: string, field: string): Record<string, unknown> | undefined {
  let text: string;
  try {
    text = readFileSync(logFile, 'utf8');
  } catch {
    return undefined;
  }
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const value = JSON.parse(line) as Record<string, unknown>;
      if (typeof value === 'object' && value !== null && typeof value[field] === 'string')
        return value;
    } catch {
      // A log line that happens to start with a brace.
    }
  }
  return undefined;
}

/** The log's last lines, indented, as spark-daemon.sh shows them after a failed launch. */
function tail(logFile: string, lines = 10): string {
  try {
    if (statSync(logFile).size === 0) return '  (the log is empty)';
    const all = readFileSync(logFile, 'utf8').trimEnd().split('\n');
    return all
      .slice(-lines)
      .map((l) => `  ${l}`)
      .join('\n');
  } catch {
    return '  (no log)';
  }
}
