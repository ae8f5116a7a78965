/**
 * What the application list needs of one event log, read without reading the log: its first
 * event (the ApplicationStart: id, name, user, start time) and its last (the ApplicationEnd: end
 * time, failure). As Spark's FsHistoryProvider does (spark.history.fs.endEventReparseChunkSize),
 * an uncompressed log's end is found in its last chunk, read at an offset; a gzip log cannot be
 * entered in the middle and is streamed through, never held whole. A rolled log's start is in its
 * first part and its end in its last.
 */
import { open } from 'node:fs/promises';
import { type EventLogProblem, eventLogParts, readEventLog } from '../eventlog/readEventLog.js';
import type { WickListenerApplicationEnd } from '../protocol/listener.js';
import { isApplicationEnd, isApplicationStart } from './listenerEvents.js';
import type { LogFile } from './logFiles.js';

export interface ApplicationListing {
  appId: string;
  name: string;
  user: string;
  startTime: number;
  /** From its ApplicationEnd; none while it runs, or when its driver died without one. */
  endTime: number | undefined;
  /** Its failure, from its ApplicationEnd. */
  failure: string | undefined;
  /** Ended with an ApplicationEnd (Spark's `completed`). */
  completed: boolean;
  /** The log's modification time (Spark's lastUpdated). */
  lastUpdated: number;
  /** The log ends inside a line (its writer stopped mid-write): read up to the break. */
  truncated: boolean;
  logPath: string;
  /** The log's name in its folder. */
  logName: string;
  /** Bytes on disk (a rolled log: all its parts). */
  fileSize: number;
  inProgressName: boolean;
  rolled: boolean;
  compressed: boolean;
}

export type ListingResult =
  | { ok: true; listing: ApplicationListing }
  /** Not readable as an application's log: why, naming the file. */
  | { ok: false; reason: string }
  /** Nothing written yet (a log just begun): looked at again once it changes. */
  | { ok: false; empty: true };

/** How far into a log its ApplicationStart may be. */
const START_WITHIN_EVENTS = 20;

export async function readListing(log: LogFile, endChunkBytes: number): Promise<ListingResult> {
  if (log.size === 0) return { ok: false, empty: true };
  const problems: EventLogProblem[] = [];
  let start: unknown;
  let seen = 0;
  let firstNonStart: unknown;
  for await (const e of readEventLog(log.path, { onProblem: (p) => problems.push(p) })) {
    if (isApplicationStart(e)) {
      start = e;
      break;
    }
    firstNonStart ??= e;
    if (++seen >= START_WITHIN_EVENTS) break;
  }
  if (!isApplicationStart(start)) {
    const problem = problems[0];
    if (problem && !problem.truncated) return { ok: false, reason: problem.message };
    if (problem?.truncated && seen === 0) {
      // Cut inside its first line: a log being begun, or one that never got further.
      return log.inProgress ? { ok: false, empty: true } : { ok: false, reason: problem.message };
    }
    const what =
      firstNonStart === undefined
        ? 'has no events'
        : `does not begin with an application's start (its first event is ${describe(firstNonStart)})`;
    return { ok: false, reason: `${log.path} ${what}: it is not a Wick event log` };
  }
  if (start.appId !== log.appId) {
    return {
      ok: false,
      reason: `${log.path} is named for application ${log.appId} but holds ${JSON.stringify(start.appId)}'s events`,
    };
  }
  const tail = await readEnd(log, endChunkBytes);
  if ('reason' in tail) return { ok: false, reason: tail.reason };
  const end = tail.end;
  return {
    ok: true,
    listing: {
      appId: log.appId,
      name: start.appName,
      user: start.user,
      startTime: start.time,
      endTime: end?.time,
      failure: end?.failure,
      completed: end !== undefined,
      lastUpdated: Math.round(log.mtimeMs),
      truncated: tail.truncated,
      logPath: log.path,
      logName: log.name,
      fileSize: log.size,
      inProgressName: log.inProgress,
      rolled: log.rolled,
      compressed: log.compressed,
    },
  };
}

type End = { end: WickListenerApplicationEnd | undefined; truncated: boolean } | { reason: string };

/** The log's last ApplicationEnd, and whether it ends inside a line. */
async function readEnd(log: LogFile, chunk: number): Promise<End> {
  const parts = await eventLogParts(log.path).catch(() => [log.path]);
  const last = parts.at(-1) as string;
  const plain = !log.compressed && !last.endsWith('.gz');
  if (plain && chunk > 0) return readEndChunk(last, chunk);
  // Streamed through: every event passes, only the last end is kept.
  let end: WickListenerApplicationEnd | undefined;
  let truncated = false;
  let reason: string | undefined;
  const from = log.rolled ? last : log.path;
  for await (const e of readEventLog(from, {
    onProblem: (p) => {
      if (p.truncated) truncated = true;
      else reason ??= p.message;
    },
  })) {
    if (isApplicationEnd(e)) end = e;
  }
  if (reason !== undefined && end === undefined) return { reason };
  return { end, truncated };
}

/** The last `chunk` bytes of a plain file, its lines parsed; the first (cut) line skipped. */
async function readEndChunk(path: string, chunk: number): Promise<End> {
  const fh = await open(path, 'r');
  let text: string;
  let fromStart: boolean;
  try {
    const { size } = await fh.stat();
    const at = Math.max(0, size - chunk);
    fromStart = at === 0;
    const buf = Buffer.alloc(size - at);
    const { bytesRead } = await fh.read(buf, 0, buf.length, at);
    text = buf.subarray(0, bytesRead).toString('utf8');
  } finally {
    await fh.close();
  }
  const lines = text.split('\n');
  if (!fromStart) lines.shift();
  const rest = lines.pop() ?? '';
  let end: WickListenerApplicationEnd | undefined;
  for (const line of lines) {
    if (line === '') continue;
    let e: unknown;
    try {
      e = JSON.parse(line);
    } catch {
      // A bad line in the middle: the full read (loading the application) names it.
      continue;
    }
    if (isApplicationEnd(e)) end = e;
  }
  return { end, truncated: rest !== '' };
}

function describe(e: unknown): string {
  // `event` is Wick's name field; `Event` is Spark's, so that a Spark log is named as one.
  const named =
    typeof e === 'object' && e !== null ? (e as { event?: unknown; Event?: unknown }) : {};
  const name = named.event ?? named.Event;
  if (name !== undefined) return JSON.stringify(String(name).slice(0, 60));
  return `${JSON.stringify(e)?.slice(0, 60) ?? String(e)}`;
}
