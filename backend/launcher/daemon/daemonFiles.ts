/**
 * Where a daemon started by `wick start-*` keeps its pid file and its log, named as Spark's
 * spark-daemon.sh names them: `wick-<ident>-<daemon>-<instance>.pid` in the pid dir and
 * `wick-<ident>-<daemon>-<instance>-<host>.out` in the log dir (Spark's `spark-$USER-<class>-1.pid`
 * and `…-1-$HOSTNAME.out`). Wick has no class names: the daemon is named by its command, `master`
 * or `worker`, which is also what `wick master` runs.
 *
 * Defaults, decided:
 * - pid dir: /tmp, as Spark's SPARK_PID_DIR. One machine's daemons are found there by every user
 *   of it, and a reboot clears /tmp, so no pid file outlives its process by a reboot.
 * - log dir: $WICK_HOME/logs when WICK_HOME is set (Spark's $SPARK_HOME/logs); otherwise the
 *   user's state dir ($XDG_STATE_HOME/wick/logs, ~/.local/state/wick/logs): an npm install's
 *   folder is replaced on upgrade and often owned by root, which neither suits a log.
 */
import { existsSync, mkdirSync, renameSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { LAUNCHER_ENV, launcherEnv } from '../../conf/launcherEnv.js';

/** A daemon by its command (`wick master`, `wick worker`, `wick history-server`). */
export type DaemonKind = 'master' | 'worker' | 'history-server';

/** Spark's SPARK_LOG_MAX_FILES default: besides the current log, the 5 before it (log.1 … log.5). */
export const DEFAULT_LOG_MAX_FILES = 5;

export interface DaemonFiles {
  /** `master`, `worker`, `worker 2`: how messages name this daemon. */
  readonly label: string;
  readonly pidFile: string;
  readonly logFile: string;
}

export interface DaemonDirs {
  readonly pidDir: string;
  readonly logDir: string;
  readonly ident: string;
  /** How many rotated logs are kept (log.1 … log.N). */
  readonly logMaxFiles: number;
}

export function daemonDirs(env: NodeJS.ProcessEnv = process.env): DaemonDirs {
  const home = env.WICK_HOME;
  const state = env.XDG_STATE_HOME || join(os.homedir(), '.local', 'state');
  const logDir =
    launcherEnv(env, LAUNCHER_ENV.logDir)?.value ??
    (home ? join(home, 'logs') : join(state, 'wick', 'logs'));
  const pidDir = launcherEnv(env, LAUNCHER_ENV.pidDir)?.value ?? '/tmp';
  const ident = launcherEnv(env, LAUNCHER_ENV.ident)?.value ?? os.userInfo().username;
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(ident)) {
    throw new Error(
      `${LAUNCHER_ENV.ident[0]} is "${ident}": expected 1 to 64 letters, digits, dots, dashes or underscores (it names the pid and log files)`,
    );
  }
  const max = launcherEnv(env, LAUNCHER_ENV.logMaxFiles);
  let logMaxFiles = DEFAULT_LOG_MAX_FILES;
  if (max) {
    logMaxFiles = Number(max.value);
    if (!/^\d{1,3}$/.test(max.value.trim()) || logMaxFiles < 1 || logMaxFiles > 100) {
      throw new Error(`${max.name} is "${max.value}": expected a whole number from 1 to 100`);
    }
  }
  return { pidDir: resolve(pidDir), logDir: resolve(logDir), ident, logMaxFiles };
}

/** This machine's name as the log file carries it (Spark's $HOSTNAME), made safe for a file name. */
export function hostForFileName(): string {
  return os.hostname().replace(/[^A-Za-z0-9._-]/g, '_') || 'localhost';
}

export function daemonFiles(dirs: DaemonDirs, kind: DaemonKind, instance: number): DaemonFiles {
  const base = `wick-${dirs.ident}-${kind}-${instance}`;
  return {
    label: instance === 1 ? kind : `${kind} ${instance}`,
    pidFile: join(dirs.pidDir, `${base}.pid`),
    logFile: join(dirs.logDir, `${base}-${hostForFileName()}.out`),
  };
}

/**
 * The instances of `kind` that have a pid file in the pid dir, lowest first: what `wick
 * stop-worker` stops (Spark's stop-worker.sh stops 1 … $SPARK_WORKER_INSTANCES, so a worker
 * started with more instances than the variable says at stop time is left running; Wick stops
 * every one it finds).
 */
export function instancesWithPidFiles(
  dirs: DaemonDirs,
  kind: DaemonKind,
  list: (dir: string) => string[],
): number[] {
  const re = new RegExp(`^wick-${dirs.ident.replace(/\./g, '\\.')}-${kind}-(\\d{1,4})\\.pid$`);
  return list(dirs.pidDir)
    .map((name) => re.exec(name)?.[1])
    .filter((n): n is string => n !== undefined)
    .map(Number)
    .sort((a, b) => a - b);
}

/**
 * Spark's rotate_log: log.(N-1) → log.N, …, log.1 → log.2, log → log.1; the oldest is overwritten,
 * so at most `maxFiles` earlier logs are kept beside the new one.
 */
export function rotateLog(logFile: string, maxFiles: number): void {
  if (!existsSync(logFile)) return;
  for (let n = maxFiles; n > 1; n--) {
    const prev = `${logFile}.${n - 1}`;
    if (existsSync(prev)) renameSync(prev, `${logFile}.${n}`);
  }
  renameSync(logFile, `${logFile}.1`);
}

export function ensureDirs(dirs: DaemonDirs): void {
  for (const dir of [dirs.pidDir, dirs.logDir]) {
    try {
      mkdirSync(dir, { recursive: true });
    } catch (err) {
      throw new Error(`Cannot create ${dir}: ${(err as Error).message}`, { cause: err });
    }
  }
}
