import type { FileHandle } from 'node:fs/promises';
import { readdir, readFile, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { RpcError, RpcErrorCode } from '../protocol/errors.js';
import {
  DEFAULT_LOG_BYTES,
  type LogRange,
  type LogSource,
  logPathParts,
  type OpenLog,
  openLogFile,
} from './logFiles.js';
import {
  gzKey,
  knownGzSize,
  logGeneration,
  rememberGzSize,
  removedBytesFile,
} from './logGenerations.js';
import type { MadeLogs } from './madeLogs.js';
import { clampRange, GZIP_SUFFIX, sortRolledOver, spansOf } from './rolledFiles.js';

/**
 * A log as its readers see it: the rolled-over files oldest first, then the active file, each
 * opened as openLogFile opens one (nothing outside the work dir, no link followed), read as one
 * stream of bytes whose offsets count from the process's first byte (rolledFiles.ts). Without
 * rolling, a log is its active file alone and reads exactly as before.
 */
export interface LogPart {
  name: string;
  log: OpenLog;
  /** Bytes of content (uncompressed); the active file's when opened (it grows). */
  size: number;
  gz: boolean;
}

export class LogSet {
  constructor(
    readonly parts: LogPart[],
    /** Bytes of rolled files deleted before these (wick.executor.logs.rolling.maxRetainedFiles). */
    readonly removed: number,
    /** The key of the log's generation: its active file's path as the worker names it. */
    readonly key: string,
    readonly generation: number,
  ) {}

  /** The active file's real path, for headers and messages. */
  get path(): string {
    return (this.parts[this.parts.length - 1] as LogPart).log.path;
  }

  /** Whether a roll happened since these files were opened (open the log again to see it). */
  get stale(): boolean {
    return logGeneration(this.key) !== this.generation;
  }

  async close(): Promise<void> {
    await Promise.all(this.parts.map((p) => p.log.handle.close().catch(() => {})));
  }

  /** Reads [offset, offset + length) of the whole log, clamped to it; without offset, its last `length` bytes. */
  async read(offset: number | undefined, length = DEFAULT_LOG_BYTES): Promise<LogRange> {
    const { start, end, totalSize } = await this.locate(offset, length);
    const r = await this.readInto(Buffer.alloc(end - start), start, end);
    return { data: r.data, offset: start, totalSize };
  }

  /**
   * Reads from `offset` into `buf` (a follower's one buffer, reused for every read): the bytes
   * read, and the offset they start at (later than asked when the bytes asked for were deleted).
   */
  async readAt(offset: number, buf: Buffer): Promise<{ offset: number; data: Buffer }> {
    const { start, end } = await this.locate(offset, buf.length);
    return { offset: start, data: (await this.readInto(buf, start, end)).data };
  }

  private async locate(offset: number | undefined, length: number) {
    const active = this.parts[this.parts.length - 1] as LogPart;
    active.size = (await active.log.handle.stat()).size;
    const total = this.removed + this.parts.reduce((a, p) => a + p.size, 0);
    return { ...clampRange(this.removed, total, offset, length), totalSize: total };
  }

  private async readInto(buf: Buffer, start: number, end: number): Promise<{ data: Buffer }> {
    let filled = 0;
    const sizes = this.parts.map((p) => p.size);
    for (const span of spansOf(this.removed, sizes, start, end)) {
      const part = this.parts[span.index] as LogPart;
      let n: number;
      if (part.gz) {
        const piece = await readGzRange(part.log.handle, span.from, span.length);
        piece.copy(buf, filled);
        n = piece.length;
      } else {
        n = await readFully(part.log.handle, buf, filled, span.length, span.from);
      }
      filled += n;
      if (n < span.length) break;
    }
    return { data: buf.subarray(0, filled) };
  }
}

/** Tries to open a consistent set this many times while rolls keep changing it. */
const MAX_ATTEMPTS = 20;

/**
 * Opens every file of a log. The worker's appender rolls within one turn of the event loop and
 * then bumps the log's generation: unchanged across the listing and the opens, the set is one
 * consistent log; otherwise it is opened again.
 */
export async function openLogSet(
  workDir: string,
  src: LogSource,
  /** The logs this worker made (madeLogs.ts): every file of the set is checked against them. */
  made?: MadeLogs,
): Promise<LogSet> {
  const rel = logPathParts(src);
  const key = join(workDir, ...rel);
  const active = rel[rel.length - 1] as string;
  for (let attempt = 0; ; attempt++) {
    const generation = logGeneration(key);
    const last = await openLogFile(workDir, src, made ? { made } : {});
    const dir = join(await realpath(workDir), ...rel.slice(0, -1));
    const parts: LogPart[] = [];
    try {
      const names = sortRolledOver(await listDir(dir, rel.join('/'), workDir), active);
      const removed = names.length > 0 ? await readRemoved(join(dir, removedBytesFile(active))) : 0;
      for (const name of names) {
        const log = await openLogFile(
          workDir,
          src,
          made ? { fileName: name, made } : { fileName: name },
        );
        parts.push({ name, log, size: 0, gz: name.endsWith(GZIP_SUFFIX) });
        const part = parts[parts.length - 1] as LogPart;
        part.size = part.gz ? await gzSize(log.handle) : (await log.handle.stat()).size;
      }
      parts.push({ name: active, log: last, size: (await last.handle.stat()).size, gz: false });
      if (logGeneration(key) === generation) return new LogSet(parts, removed, key, generation);
    } catch (err) {
      if (logGeneration(key) === generation || attempt >= MAX_ATTEMPTS) {
        await closeAll(parts, last);
        throw err;
      }
    }
    await closeAll(parts, last);
    if (attempt >= MAX_ATTEMPTS) {
      throw new RpcError(
        RpcErrorCode.InternalError,
        `The log ${rel.join('/')} kept rolling while read`,
      );
    }
  }
}

/** The names in a log's directory; gone (or no longer a directory) is "No such log". */
async function listDir(dir: string, name: string, workDir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      throw new RpcError(RpcErrorCode.InvalidParams, `No such log: ${name} in ${workDir}`);
    }
    throw err;
  }
}

async function closeAll(parts: LogPart[], last: OpenLog): Promise<void> {
  const handles = new Set<FileHandle>([...parts.map((p) => p.log.handle), last.handle]);
  await Promise.all([...handles].map((h) => h.close().catch(() => {})));
}

/** Reads a range of a log (openLogSet, read, close), with the active file's path. */
export async function readLogSetRange(
  workDir: string,
  src: LogSource,
  offset: number | undefined,
  length = DEFAULT_LOG_BYTES,
  made?: MadeLogs,
): Promise<LogRange & { path: string }> {
  const set = await openLogSet(workDir, src, made);
  try {
    return { ...(await set.read(offset, length)), path: set.path };
  } finally {
    await set.close();
  }
}

async function readRemoved(path: string): Promise<number> {
  try {
    const n = Number((await readFile(path, 'utf8')).trim());
    return Number.isSafeInteger(n) && n >= 0 ? n : 0;
  } catch {
    return 0;
  }
}

async function readFully(
  fh: FileHandle,
  buf: Buffer,
  at: number,
  length: number,
  position: number,
): Promise<number> {
  let read = 0;
  while (read < length) {
    const { bytesRead } = await fh.read(buf, at + read, length - read, position + read);
    if (bytesRead === 0) break;
    read += bytesRead;
  }
  return read;
}

const GZ_READ = 64 * 1024;

/** The compressed bytes of a file, from its start, read by position (the handle stays open). */
async function* compressed(fh: FileHandle): AsyncGenerator<Buffer> {
  for (let pos = 0; ; ) {
    const buf = Buffer.alloc(GZ_READ);
    const { bytesRead } = await fh.read(buf, 0, GZ_READ, pos);
    if (bytesRead === 0) return;
    pos += bytesRead;
    yield buf.subarray(0, bytesRead);
  }
}

/** Decompresses until `from + length` (or the end), keeping [from, from + length). */
async function readGzRange(fh: FileHandle, from: number, length: number): Promise<Buffer> {
  const source = Readable.from(compressed(fh));
  const gunzip = source.pipe(createGunzip());
  const out: Buffer[] = [];
  let pos = 0;
  let got = 0;
  try {
    for await (const chunk of gunzip) {
      const b = chunk as Buffer;
      const s = Math.max(0, from - pos);
      const e = Math.min(b.length, from + length - pos);
      if (e > s) {
        out.push(b.subarray(s, e));
        got += e - s;
      }
      pos += b.length;
      if (got >= length) break;
    }
  } finally {
    source.destroy();
    gunzip.destroy();
  }
  return Buffer.concat(out);
}

/** A compressed rolled file's content size: known to the appender that wrote it, else counted once. */
async function gzSize(fh: FileHandle): Promise<number> {
  const key = gzKey(await fh.stat());
  const known = knownGzSize(key);
  if (known !== undefined) return known;
  let n = 0;
  const source = Readable.from(compressed(fh));
  for await (const chunk of source.pipe(createGunzip())) n += (chunk as Buffer).length;
  rememberGzSize(key, n);
  return n;
}
