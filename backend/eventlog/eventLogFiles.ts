/**
 * Where an application's event log lives, in Spark's two layouts (EventLogFileWriters.scala):
 *
 * - one file: `<dir>/<appId>[.gz]`, named `….inprogress` while the application runs;
 * - rolling (`wick.eventLog.rolling.enabled`): a folder `<dir>/eventlog_v2_<appId>/` of parts
 *   `events_<n>_<appId>[.gz]` (n from 1), and an empty `appstatus_<appId>[.inprogress]` that says
 *   whether the application still runs.
 *
 * A reader needs nothing else to find, order and open the parts.
 */
import { basename } from 'node:path';

export const IN_PROGRESS = '.inprogress';
export const COMPRESSED = '.gz';
const ROLLING_DIR = 'eventlog_v2_';

/** An application id as a file name: no separator, no parent, bounded. */
export function checkAppIdForFile(appId: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/.test(appId) || appId.endsWith(IN_PROGRESS)) {
    throw new Error(
      `an event log needs an application id of letters, digits, '.', '_' and '-' (at most 200), got ${JSON.stringify(appId)}`,
    );
  }
  return appId;
}

export function singleFileName(appId: string, compressed: boolean, inProgress: boolean): string {
  return `${checkAppIdForFile(appId)}${compressed ? COMPRESSED : ''}${inProgress ? IN_PROGRESS : ''}`;
}

export function rollingDirName(appId: string): string {
  return `${ROLLING_DIR}${checkAppIdForFile(appId)}`;
}

export function rollingPartName(appId: string, index: number, compressed: boolean): string {
  return `events_${index}_${appId}${compressed ? COMPRESSED : ''}`;
}

export function appStatusName(appId: string, inProgress: boolean): string {
  return `appstatus_${appId}${inProgress ? IN_PROGRESS : ''}`;
}

/** What a name in an event log dir is: a single file, a rolling folder, or neither. */
export type EventLogEntry =
  | { kind: 'file'; appId: string; compressed: boolean; inProgress: boolean }
  | { kind: 'rolling'; appId: string };

export function parseEventLogName(path: string): EventLogEntry | undefined {
  const name = basename(path);
  if (name.startsWith(ROLLING_DIR)) {
    const appId = name.slice(ROLLING_DIR.length);
    return appId ? { kind: 'rolling', appId } : undefined;
  }
  let rest = name;
  const inProgress = rest.endsWith(IN_PROGRESS);
  if (inProgress) rest = rest.slice(0, -IN_PROGRESS.length);
  const compressed = rest.endsWith(COMPRESSED);
  if (compressed) rest = rest.slice(0, -COMPRESSED.length);
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(rest)) return undefined;
  return { kind: 'file', appId: rest, compressed, inProgress };
}

/** A rolling part's index and whether it is compressed, or undefined for another file. */
export function parsePartName(
  name: string,
  appId: string,
): { index: number; compressed: boolean } | undefined {
  const m = /^events_(\d{1,9})_(.+?)(\.gz)?$/.exec(name);
  if (!m || m[2] !== appId) return undefined;
  return { index: Number(m[1]), compressed: m[3] !== undefined };
}
