import { createHash } from 'node:crypto';
import { chmod, copyFile, mkdir, mkdtemp, open, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { bytesOf } from '../protocol/base64.js';
import { FetchFileChunk, type ShippedFile } from '../protocol/files.js';
import type { RpcEndpointRef } from '../rpc/index.js';
import { shippedPathUnder } from './shippedPath.js';

export interface FetchOptions {
  /** Bytes per FetchFileChunk. */
  chunkBytes?: number;
  /** Files fetched at once. */
  parallel?: number;
  /** How long one chunk may take. */
  timeoutMs?: number;
}

const DEFAULT_CHUNK = 1024 * 1024;
const DEFAULT_PARALLEL = 8;

/** Bytes and files a fetch moved, for its log line. */
export interface FetchStats {
  files: number;
  bytes: number;
}

/**
 * Fetches `files` from `server` into `dest` (which must be new or empty), each file once however
 * many paths hold it, each checked against its SHA-256 before it is kept. A chunk is asked for
 * when the last one is written: the server sends no faster than this disk writes.
 */
export async function fetchFiles(
  server: RpcEndpointRef,
  files: readonly ShippedFile[],
  dest: string,
  opts: FetchOptions = {},
): Promise<FetchStats> {
  const byHash = new Map<string, ShippedFile[]>();
  for (const f of files) {
    shippedPathUnder(dest, f.path);
    const same = byHash.get(f.sha256);
    if (same) same.push(f);
    else byHash.set(f.sha256, [f]);
  }
  const groups = [...byHash.values()];
  let next = 0;
  let bytes = 0;
  const work = async () => {
    for (let i = next++; i < groups.length; i = next++) {
      const [first, ...copies] = groups[i] as ShippedFile[];
      const target = shippedPathUnder(dest, (first as ShippedFile).path);
      // Not `bytes += await …`: that reads `bytes` before the await, losing the other workers' sums.
      const fetched = await fetchOne(server, first as ShippedFile, target, opts);
      bytes += fetched;
      for (const c of copies) {
        const to = shippedPathUnder(dest, c.path);
        await mkdir(dirname(to), { recursive: true });
        await copyFile(target, to);
        if (c.executable) await chmod(to, 0o755);
      }
    }
  };
  await Promise.all(
    Array.from({ length: Math.min(opts.parallel ?? DEFAULT_PARALLEL, groups.length) }, work),
  );
  return { files: files.length, bytes };
}

async function fetchOne(
  server: RpcEndpointRef,
  f: ShippedFile,
  target: string,
  opts: FetchOptions,
): Promise<number> {
  await mkdir(dirname(target), { recursive: true });
  const chunk = opts.chunkBytes ?? DEFAULT_CHUNK;
  const hash = createHash('sha256');
  const out = await open(target, 'w', f.executable ? 0o755 : 0o644);
  let offset = 0;
  try {
    while (offset < f.size) {
      const reply = await server.ask(
        FetchFileChunk({
          sha256: f.sha256,
          offset,
          length: Math.min(chunk, f.size - offset),
        }),
        opts.timeoutMs ? { timeout: opts.timeoutMs } : {},
      );
      const data = bytesOf(reply, 'data');
      if (data.length === 0 || reply.size !== f.size) {
        throw new Error(
          `${f.path} changed on ${server.address} while it was fetched: expected ${f.size} bytes, it has ${reply.size}`,
        );
      }
      hash.update(data);
      await out.write(data, 0, data.length, offset);
      offset += data.length;
    }
  } finally {
    await out.close();
  }
  const got = hash.digest('hex');
  if (got !== f.sha256) {
    await rm(target, { force: true });
    throw new Error(
      `${f.path} fetched from ${server.address} does not match its SHA-256: expected ${f.sha256}, got ${got}`,
    );
  }
  return f.size;
}

/**
 * Fetches a set of files into `<dir>/<key>` once, however many processes ask for it at a time:
 * each fetches into a folder of its own and renames it into place; the first rename wins and the
 * others drop theirs. Returns the folder, and what this call fetched (nothing when it was there).
 */
export async function fetchOnce(
  dir: string,
  key: string,
  fetch: (into: string) => Promise<FetchStats>,
): Promise<{ path: string; fetched?: FetchStats }> {
  const path = join(dir, key);
  if (await exists(path)) return { path };
  await mkdir(dir, { recursive: true });
  // A folder no other caller has, in this process or another (a pid and a time are not enough:
  // two callers of one process may start in the same millisecond).
  const partial = await mkdtemp(join(dir, `.${key}.`));
  try {
    const fetched = await fetch(partial);
    try {
      await rename(partial, path);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw err;
      return { path };
    }
    return { path, fetched };
  } finally {
    await rm(partial, { recursive: true, force: true });
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}
