import { open, realpath, stat } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { RpcError, RpcErrorCode } from '../protocol/errors.js';

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
 * The file behind a log source, checked so that nothing outside the work dir can ever be read:
 * ids must be plain names, and the real path (links resolved) must still lie in the work dir.
 */
export async function resolveLogPath(workDir: string, src: LogSource): Promise<string> {
  const bad = (what: string) => new RpcError(RpcErrorCode.InvalidParams, what);
  if (src.stream !== 'stdout' && src.stream !== 'stderr') {
    throw bad(`Invalid log stream ${JSON.stringify(src.stream)}: expected "stdout" or "stderr"`);
  }
  let rel: string[];
  if (src.driverId !== undefined && src.appId === undefined && src.execId === undefined) {
    if (!SAFE_ID.test(src.driverId) || src.driverId.includes('..')) {
      throw bad(
        `Invalid driver id ${JSON.stringify(src.driverId)}: expected an id such as driver-20261130120000-0000`,
      );
    }
    rel = [src.driverId, src.stream];
  } else if (src.appId !== undefined && src.execId !== undefined && src.driverId === undefined) {
    if (!SAFE_ID.test(src.appId) || src.appId.includes('..')) {
      throw bad(
        `Invalid application id ${JSON.stringify(src.appId)}: expected an id such as app-20261130120000-0000`,
      );
    }
    if (!Number.isInteger(src.execId) || src.execId < 0) {
      throw bad(`Invalid executor id ${JSON.stringify(src.execId)}: expected a whole number`);
    }
    rel = [src.appId, String(src.execId), src.stream];
  } else {
    throw bad(
      'A log is named by appId and execId (an executor) or by driverId (a driver), not both',
    );
  }
  const root = await realpath(workDir);
  let path: string;
  try {
    path = await realpath(join(root, ...rel));
  } catch {
    throw new RpcError(RpcErrorCode.InvalidParams, `No such log: ${rel.join('/')} in ${workDir}`);
  }
  if (!path.startsWith(root + sep)) {
    throw bad(`Refusing to read ${rel.join('/')}: it resolves outside the work dir`);
  }
  return path;
}

export interface LogRange {
  data: Buffer;
  offset: number;
  totalSize: number;
}

/** Reads [offset, offset + length) clamped to the file; without offset, the last `length` bytes. */
export async function readLogRange(
  path: string,
  offset: number | undefined,
  length = DEFAULT_LOG_BYTES,
): Promise<LogRange> {
  const fh = await open(path, 'r');
  try {
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
  } finally {
    await fh.close();
  }
}

export async function fileSize(path: string): Promise<number> {
  return (await stat(path)).size;
}
