import { constants } from 'node:fs';
import { type FileHandle, open, readlink, realpath, stat } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { RpcError, RpcErrorCode } from '../protocol/errors.js';
import type { MadeLogs } from './madeLogs.js';

/** Which log: an executor's (appId + execId) or a driver's (driverId), stdout or stderr. */
export interface LogSource {
  appId?: string;
  execId?: number;
  driverId?: string;
  stream: 'stdout' | 'stderr';
}

export const DEFAULT_LOG_BYTES = 100 * 1024;

/** An id that names exactly one directory entry: no separators, no dot-dot, nothing hidden. */
const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,199}$/;

/**
 * Opens the file behind a log source so that nothing outside the work dir can ever be read, even
 * while its entries change: the ids must be plain names; the last component is opened without
 * following a link (O_NOFOLLOW), and a FIFO or device planted there cannot block the open
 * (O_NONBLOCK; it is refused as not a file); what was opened is then checked by the real path of
 * its descriptor, which no later rename can change. Checking a path and then opening it again is
 * what let a link flipped in between read /etc/passwd (issue 17). The caller closes the handle.
 */
export async function openLogFile(
  workDir: string,
  src: LogSource,
  o: {
    /** Another file of the same log in its directory (a rolled-over one), by its listed name. */
    fileName?: string;
    /** The logs this worker made: when given, only one of them, unchanged, is served (madeLogs.ts). */
    made?: MadeLogs;
  } = {},
): Promise<OpenLog> {
  const { fileName, made } = o;
  const rel = logPathParts(src);
  if (fileName !== undefined) {
    if (
      !fileName.startsWith(`${src.stream}--`) ||
      fileName.includes('/') ||
      fileName.includes('\\')
    )
      throw bad(`Invalid rolled log file name ${JSON.stringify(fileName)}`);
    rel[rel.length - 1] = fileName;
  }
  const name = rel.join('/');
  const root = await realpath(workDir);
  let handle: FileHandle;
  try {
    handle = await open(
      join(root, ...rel),
      constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK,
    );
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // ELOOP is Linux's answer to O_NOFOLLOW on a link; EMLINK is FreeBSD's.
    if (code === 'ELOOP' || code === 'EMLINK') {
      throw bad(
        `Refusing to read ${name}: it is a link (log files are opened without following links)`,
      );
    }
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      throw bad(`No such log: ${name} in ${workDir}`);
    }
    throw new RpcError(
      RpcErrorCode.InternalError,
      `Cannot open the log ${name} in ${workDir}: ${(err as Error).message}`,
      undefined,
      { cause: err },
    );
  }
  try {
    const st = await handle.stat();
    if (!st.isFile()) throw bad(`Refusing to read ${name}: it is not a file`);
    const path = await openedPath(handle, join(root, ...rel));
    if (!path.startsWith(root + sep)) {
      throw bad(`Refusing to read ${name}: it resolves outside the work dir`);
    }
    // A hard link opens as a plain file, inside the work dir: only the file made there is served.
    if (st.nlink > 1) throw bad(`Refusing to read ${name}: it has ${st.nlink} links (a hard link)`);
    const problem = made?.problem(path, st);
    if (problem) throw bad(`Refusing to read ${name}: ${problem}`);
    return { handle, path };
  } catch (err) {
    await handle.close();
    throw err;
  }
}

/** An open log file and its real path (for headers and messages). */
export interface OpenLog {
  handle: FileHandle;
  path: string;
}

/** Runs `fn` with the log file open (openLogFile), and closes it. */
export async function withLogFile<T>(
  workDir: string,
  src: LogSource,
  fn: (log: OpenLog) => Promise<T>,
  made?: MadeLogs,
): Promise<T> {
  const log = await openLogFile(workDir, src, made ? { made } : {});
  try {
    return await fn(log);
  } finally {
    await log.handle.close();
  }
}

/**
 * Where an open descriptor's file is. On Linux the kernel says it (/proc/self/fd/N names the file
 * itself, not a path that could have changed since; readlink rather than realpath, so that a file
 * deleted while open still answers). Elsewhere: the real path of `path`, accepted only when it is
 * still the same file (device and inode) as the descriptor.
 */
async function openedPath(handle: FileHandle, path: string): Promise<string> {
  if (process.platform === 'linux') {
    return (await readlink(`/proc/self/fd/${handle.fd}`)).replace(/ \(deleted\)$/, '');
  }
  const real = await realpath(path);
  const [a, b] = await Promise.all([handle.stat(), stat(real)]);
  if (a.dev !== b.dev || a.ino !== b.ino) {
    throw new RpcError(
      RpcErrorCode.InvalidParams,
      `Refusing to read ${path}: it changed while opened`,
    );
  }
  return real;
}

function bad(what: string): RpcError {
  return new RpcError(RpcErrorCode.InvalidParams, what);
}

/** The path of a log relative to the work dir, each id checked to be a plain name. */
export function logPathParts(src: LogSource): string[] {
  if (src.stream !== 'stdout' && src.stream !== 'stderr') {
    throw bad(`Invalid log stream ${JSON.stringify(src.stream)}: expected "stdout" or "stderr"`);
  }
  if (src.driverId !== undefined && src.appId === undefined && src.execId === undefined) {
    if (!SAFE_ID.test(src.driverId) || src.driverId.includes('..')) {
      throw bad(
        `Invalid driver id ${JSON.stringify(src.driverId)}: expected an id such as driver-20261130120000-0000`,
      );
    }
    return [src.driverId, src.stream];
  }
  if (src.appId !== undefined && src.execId !== undefined && src.driverId === undefined) {
    if (!SAFE_ID.test(src.appId) || src.appId.includes('..')) {
      throw bad(
        `Invalid application id ${JSON.stringify(src.appId)}: expected an id such as app-20261130120000-0000`,
      );
    }
    if (!Number.isInteger(src.execId) || src.execId < 0) {
      throw bad(`Invalid executor id ${JSON.stringify(src.execId)}: expected a whole number`);
    }
    return [src.appId, String(src.execId), src.stream];
  }
  throw bad('A log is named by appId and execId (an executor) or by driverId (a driver), not both');
}

export interface LogRange {
  data: Buffer;
  offset: number;
  totalSize: number;
}

/** Reads [offset, offset + length) of an open file, clamped to it; without offset, the last `length` bytes. */
export async function readRange(
  fh: FileHandle,
  offset: number | undefined,
  length = DEFAULT_LOG_BYTES,
): Promise<LogRange> {
  const totalSize = (await fh.stat()).size;
  const start =
    offset === undefined ? Math.max(0, totalSize - length) : Math.min(offset, totalSize);
  const end = Math.min(totalSize, start + length);
  const data = Buffer.alloc(end - start);
  let read = 0;
  while (read < data.length) {
    const { bytesRead } = await fh.read(data, read, data.length - read, start + read);
    if (bytesRead === 0) break;
    read += bytesRead;
  }
  return { data: data.subarray(0, read), offset: start, totalSize };
}

/**
 * readRange of a file at a path Wick chose itself (a runner's own stderr); a path a request
 * names goes through openLogFile instead.
 */
export async function readLogRange(
  path: string,
  offset: number | undefined,
  length = DEFAULT_LOG_BYTES,
): Promise<LogRange> {
  const fh = await open(path, 'r');
  try {
    return await readRange(fh, offset, length);
  } finally {
    await fh.close();
  }
}
