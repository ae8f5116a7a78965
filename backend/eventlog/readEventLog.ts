/**
 * Reads an event log back, one event at a time, whatever its layout (a single file or a rolling
 * folder, plain or gzip): a log is streamed, never read whole, and a line longer than
 * `maxLineBytes` ends the read rather than the reader's memory.
 *
 * What cannot be read is a problem named with its file and line, never an exception: a last line
 * cut short (the writer crashed mid-write: the events before it are read), a line that is not JSON
 * (the rest of that log is skipped), a part missing from a rolled log, a damaged gzip stream.
 */
import { createReadStream } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { Readable } from 'node:stream';
import { constants, createGunzip } from 'node:zlib';
import { COMPRESSED, parseEventLogName, parsePartName } from './eventLogFiles.js';

export interface EventLogProblem {
  file: string;
  /** 1-based, in that file. */
  line?: number;
  message: string;
  /** The log was cut short by a crash: what came before is whole. */
  truncated: boolean;
}

export interface ReadEventLogOptions {
  onProblem?: (problem: EventLogProblem) => void;
  /** The longest line read (default 16 MiB). */
  maxLineBytes?: number;
}

const DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024;

/** The files of a log in order: the file itself, or a rolled log's parts by index. */
export async function eventLogParts(path: string): Promise<string[]> {
  const info = await stat(path);
  if (!info.isDirectory()) return [path];
  const entry = parseEventLogName(path);
  if (entry?.kind !== 'rolling') {
    throw new Error(`${path} is a folder but not a rolled event log (eventlog_v2_<appId>)`);
  }
  const parts: { index: number; name: string }[] = [];
  for (const name of await readdir(path)) {
    const p = parsePartName(name, entry.appId);
    if (p) parts.push({ index: p.index, name });
  }
  parts.sort((a, b) => a.index - b.index);
  const missing = parts.findIndex((p, i) => p.index !== i + 1);
  if (missing >= 0) {
    throw new Error(
      `${path} misses part events_${missing + 1}_${entry.appId} (has ${parts.map((p) => p.index).join(', ') || 'none'})`,
    );
  }
  return parts.map((p) => join(path, p.name));
}

/** Every event of the log at `path`, in order; problems go to `onProblem` and end the read. */
export async function* readEventLog(
  path: string,
  options: ReadEventLogOptions = {},
): AsyncGenerator<unknown> {
  const report = (p: EventLogProblem) => options.onProblem?.(p);
  let files: string[];
  try {
    files = await eventLogParts(path);
  } catch (err) {
    report({ file: path, message: (err as Error).message, truncated: false });
    return;
  }
  for (const file of files) {
    const ok = yield* readPart(file, options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES, report);
    if (!ok) return;
  }
}

/** One file's events; false when a problem ended it. */
async function* readPart(
  file: string,
  maxLineBytes: number,
  report: (p: EventLogProblem) => void,
): AsyncGenerator<unknown, boolean> {
  let stream: Readable = createReadStream(file);
  if (file.endsWith(COMPRESSED) || basename(file).includes(`${COMPRESSED}.`)) {
    // Z_SYNC_FLUSH at the end: a stream cut short gives what it has instead of an error.
    stream = stream.pipe(createGunzip({ finishFlush: constants.Z_SYNC_FLUSH }));
  }
  let lineNo = 0;
  let partial: Buffer[] = [];
  let partialBytes = 0;
  const parse = (
    bytes: Buffer,
    complete: boolean,
  ): { ok: true; value: unknown } | { ok: false } => {
    try {
      return { ok: true, value: JSON.parse(bytes.toString('utf8')) };
    } catch (err) {
      report({
        file,
        line: lineNo,
        message: complete
          ? `line ${lineNo} is not a JSON event (${(err as Error).message}); the rest of the log is skipped`
          : `the log ends inside line ${lineNo} (the writer stopped mid-line); the events before it are read`,
        truncated: !complete,
      });
      return { ok: false };
    }
  };
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      let start = 0;
      for (let nl = chunk.indexOf(10, start); nl >= 0; nl = chunk.indexOf(10, start)) {
        lineNo++;
        const piece = chunk.subarray(start, nl);
        start = nl + 1;
        const line = partial.length ? Buffer.concat([...partial, piece]) : piece;
        partial = [];
        partialBytes = 0;
        if (line.length === 0) continue;
        if (line.length > maxLineBytes) {
          report({
            file,
            line: lineNo,
            message: `line ${lineNo} is longer than ${maxLineBytes} bytes; the rest of the log is skipped`,
            truncated: false,
          });
          return false;
        }
        const r = parse(line, true);
        if (!r.ok) return false;
        yield r.value;
      }
      if (start < chunk.length) {
        partial.push(chunk.subarray(start));
        partialBytes += chunk.length - start;
        if (partialBytes > maxLineBytes) {
          report({
            file,
            line: lineNo + 1,
            message: `line ${lineNo + 1} is longer than ${maxLineBytes} bytes; the rest of the log is skipped`,
            truncated: false,
          });
          return false;
        }
      }
    }
  } catch (err) {
    report({
      file,
      message: `${file} cannot be read after line ${lineNo}: ${(err as Error).message}`,
      truncated: false,
    });
    return false;
  } finally {
    stream.destroy();
  }
  if (partialBytes > 0) {
    // Every line the writer finishes ends in a newline: one without was cut by a crash.
    lineNo++;
    const r = parse(Buffer.concat(partial), false);
    if (r.ok) yield r.value;
    else return false;
  }
  return true;
}
