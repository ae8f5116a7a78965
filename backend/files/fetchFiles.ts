import { createHash } from 'node:crypto';
import {
  chmod,
  copyFile,
  mkdir,
  mkdtemp,
  open,
  readFile,
  rename,
  rm,
  stat,
} from 'node:fs/promises';
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

/** How often a caller that waits for another's fetch looks whether it is done. */
const LOCK_POLL_MS = 20;

/**
 * Fetches a set of files into `<dir>/<key>` once, however many processes of this host ask for it
 * at a time: the first takes `<dir>/.<key>.lock` (created exclusively, with its pid) and fetches
 * into a folder of its own that it renames into place; the others wait for the folder, or take
 * the lock over if its holder died. Returns the folder, and what this call fetched (nothing when
 * another call did).
 */
export async function fetchOnce(
  dir: string,
  key: string,
  fetch: (into: string) => Promise<FetchStats>,
): Promise<{ path: string; fetched?: FetchStats }> {
  const path = join(dir, key);
  await mkdir(dir, { recursive: true });
  const lock = join(dir, `.${key}.lock`);
  for (;;) {
    if (await exists(path)) return { path };
    if (await takeLock(lock)) break;
    await new Promise((r) => setTimeout(r, LOCK_POLL_MS));
  }
  // A folder no other caller has, in this process or another.
  const partial = await mkdtemp(join(dir, `.${key}.`));
  try {
    if (await exists(path)) return { path };
    const fetched = await fetch(partial);
    await rename(partial, path);
    return { path, fetched };
  } finally {
    await rm(partial, { recursive: true, force: true });
    await rm(lock, { force: true });
  }
}

/** Takes the lock file, or clears it if its holder's process is gone (and says no this time). */
async function takeLock(lock: string): Promise<boolean> {
  try {
    const f = await open(lock, 'wx');
    await f.writeFile(String(process.pid));
    await f.close();
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const holder = Number(await readFile(lock, 'utf8').catch(() => ''));
  if (Number.isInteger(holder) && holder > 0 && !alive(holder)) await rm(lock, { force: true });
  return false;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
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
