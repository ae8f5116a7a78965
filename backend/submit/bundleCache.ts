import { createHash } from 'node:crypto';
import {
  cp,
  mkdir,
  readdir,
  readFile,
  rename,
  rm,
  stat,
  utimes,
  writeFile,
} from 'node:fs/promises';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { getLogger } from '../util/log.js';

const log = getLogger('wick');

/** Bundles kept; the least recently used beyond this are dropped. */
const MAX_ENTRIES = 64;
/** Files changed this recently before a build are not trusted to be what it read. */
const SETTLED_MS = 2000;

/** A file or folder a bundle was made from, as it was then. */
interface Stamp {
  path: string;
  mtimeMs: number;
  size: number;
}

interface Manifest {
  key: string;
  /** Every input file, and every folder holding one (a file added there may change resolution). */
  stamps: Stamp[];
}

/**
 * Bundles of submitted applications, kept between submits (esbuild's start-up and a build cost
 * more than the rest of a submit's start). An entry holds while every file the bundle was made
 * from, and every folder holding one, has the size and modification time it had: an edit, a new
 * or a deleted file next to an input makes it stale. `WICK_BUNDLE_CACHE=off` turns it off;
 * `WICK_BUNDLE_CACHE=<dir>` moves it (default `$XDG_CACHE_HOME/wick/bundles`, else
 * `~/.cache/wick/bundles`). A cache that cannot be read or written only costs a fresh bundle.
 */
export class BundleCache {
  constructor(readonly dir: string) {}

  static fromEnv(env: NodeJS.ProcessEnv = process.env): BundleCache | undefined {
    const setting = env.WICK_BUNDLE_CACHE;
    if (setting === 'off') return undefined;
    if (setting) return new BundleCache(resolve(setting));
    const base = env.XDG_CACHE_HOME || join(os.homedir(), '.cache');
    return new BundleCache(join(base, 'wick', 'bundles'));
  }

  /** The cache key of a bundle: what was bundled, and everything else that shapes the output. */
  static key(parts: Record<string, string>): string {
    return createHash('sha256').update(JSON.stringify(parts)).digest('hex').slice(0, 32);
  }

  /** Copies the cached tree for `key` into the folder `dest` and returns true, if it is still fresh. */
  async restore(key: string, dest: string): Promise<boolean> {
    try {
      const manifest = JSON.parse(
        await readFile(join(this.dir, `${key}.json`), 'utf8'),
      ) as Manifest;
      if (manifest.key !== key || !Array.isArray(manifest.stamps)) return false;
      const now = await Promise.all(manifest.stamps.map((s) => stampOf(s.path)));
      if (!now.every((s, i) => sameStamp(s, manifest.stamps[i] as Stamp))) return false;
      await cp(join(this.dir, key), dest, { recursive: true, verbatimSymlinks: true });
      // Marks it used, for the eviction of the least recently used.
      const at = new Date();
      await utimes(join(this.dir, `${key}.json`), at, at);
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
        log.debug(`Bundle cache entry ${key} unusable: ${(err as Error).message}`);
      return false;
    }
  }

  /**
   * Keeps the tree in the folder `bundle` under `key`, made from `inputs` (absolute paths) by a build that started at
   * `startedAt` (ms since the epoch). Inputs are stamped after the build, so one changed since a
   * little before it started (file systems with coarse times included) may not be what was
   * bundled: then nothing is kept, and the next submit bundles again.
   */
  async store(
    key: string,
    bundle: string,
    inputs: readonly string[],
    startedAt: number,
  ): Promise<void> {
    try {
      const folders = [...new Set(inputs.map((p) => dirname(p)))];
      const found = await Promise.all([...inputs, ...folders].map(stampOf));
      const stamps = found.filter((s): s is Stamp => s !== undefined);
      if (stamps.length < found.length || stamps.some((s) => s.mtimeMs > startedAt - SETTLED_MS))
        return;
      await mkdir(this.dir, { recursive: true });
      const tmp = `.${key}.${process.pid}`;
      await cp(bundle, join(this.dir, tmp), { recursive: true, verbatimSymlinks: true });
      await rm(join(this.dir, key), { recursive: true, force: true });
      await rename(join(this.dir, tmp), join(this.dir, key));
      const manifest: Manifest = { key, stamps };
      await writeFile(join(this.dir, `${tmp}.json`), JSON.stringify(manifest));
      await rename(join(this.dir, `${tmp}.json`), join(this.dir, `${key}.json`));
      await this.evict();
    } catch (err) {
      log.debug(`Cannot keep the bundle in ${this.dir}: ${(err as Error).message}`);
    }
  }

  private async evict(): Promise<void> {
    const manifests = (await readdir(this.dir)).filter(
      (f) => f.endsWith('.json') && !f.startsWith('.'),
    );
    if (manifests.length <= MAX_ENTRIES) return;
    const used = await Promise.all(
      manifests.map(async (f) => ({ f, at: (await stat(join(this.dir, f))).mtimeMs })),
    );
    used.sort((a, b) => a.at - b.at);
    for (const { f } of used.slice(0, used.length - MAX_ENTRIES)) {
      const key = f.slice(0, -'.json'.length);
      await rm(join(this.dir, f), { force: true });
      await rm(join(this.dir, key), { recursive: true, force: true });
    }
  }
}

async function stampOf(path: string): Promise<Stamp | undefined> {
  try {
    const s = await stat(path);
    return { path, mtimeMs: s.mtimeMs, size: s.isDirectory() ? 0 : s.size };
  } catch {
    return undefined;
  }
}

function sameStamp(now: Stamp | undefined, then: Stamp): boolean {
  return now !== undefined && now.mtimeMs === then.mtimeMs && now.size === then.size;
}
