/**
 * Which folder holds event logs: the one a driver writes to (wick.eventLog.dir) and the one the
 * history service reads (wick.history.fs.logDirectory, by default the same), each by default under
 * the user's state dir (XDG), where Wick keeps what outlives a process. Spark writes these
 * settings as URLs (file:/tmp/spark-events); a file: URL is taken as its path, any other scheme
 * is refused by name, since Wick reads local files only.
 */
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AppConf } from '../conf/app.js';
import { HistoryConf } from '../conf/history.js';
import { MasterConf } from '../conf/master.js';
import type { WickConf } from '../conf/WickConf.js';

/** $XDG_STATE_HOME/wick/event-logs, or ~/.local/state/wick/event-logs. */
export function defaultEventLogDir(env: NodeJS.ProcessEnv = process.env): string {
  const state = env.XDG_STATE_HOME || join(homedir(), '.local', 'state');
  return join(state, 'wick', 'event-logs');
}

/** A folder setting as a path: a plain path, or a file: URL. */
export function localDir(key: string, value: string): string {
  const v = value.trim();
  if (/^file:/i.test(v)) {
    // file:/x and file:///x are both Spark's; fileURLToPath wants the latter.
    return fileURLToPath(v.replace(/^file:\/*/i, 'file:///'));
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(v)) {
    throw new Error(
      `${key} is ${JSON.stringify(value)}: Wick reads event logs from local folders only (a path, or a file: URL)`,
    );
  }
  return resolve(v);
}

/** Where a driver writes its event log. */
export function eventLogDir(conf: WickConf, env: NodeJS.ProcessEnv = process.env): string {
  const dir = conf.get(AppConf.eventLogDir);
  return dir ? localDir(AppConf.eventLogDir.key, dir) : defaultEventLogDir(env);
}

/** Where the history service reads event logs: its own setting, else where drivers write. */
export function historyLogDir(conf: WickConf, env: NodeJS.ProcessEnv = process.env): string {
  const dir = conf.get(HistoryConf.logDirectory);
  return dir ? localDir(HistoryConf.logDirectory.key, dir) : eventLogDir(conf, env);
}

/**
 * Where a master's applications write their event logs, when the master can know it: its own
 * wick.eventLog.dir, else, when it tells its applications to log (wick.deploy.eventLogByDefault, a
 * local cluster, whose drivers run on its machine as its user), their default dir; else none (a
 * shared cluster's drivers log, or not, wherever each is told). The master lists and opens the
 * logs there (/api/v1) and claims its applications' ids there (appIdClaims.ts).
 */
export function masterEventLogDir(
  conf: WickConf,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  if (conf.get(AppConf.eventLogDir)) return eventLogDir(conf, env);
  return conf.get(MasterConf.eventLogByDefault) ? defaultEventLogDir(env) : undefined;
}
