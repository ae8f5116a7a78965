import { createHash } from 'node:crypto';
import { copyFile, mkdir, readdir, readFile, rename, rm, stat, utimes } from 'node:fs/promises';
import os from 'node:os';
import { basename, dirname, join } from 'node:path';
import { getLogger } from '../util/log.js';
import type { BundledApp } from './bundle.js';

const log = getLogger('wick');

/** A kept bundle unused (not submitted again) for this long is removed by the next cluster submit. */
export const KEEP_MS = 30 * 24 * 3600_000;

/**
 * Where a cluster-mode submit leaves its application's bundle: the worker that runs the driver
 * copies the file into the driver's folder when it launches it, and again when the master
 * relaunches a supervised driver, maybe long after the submit; so the file must outlive the
 * submit. One file per distinct bundle (by content), `<dir>/<sha256>/<name>.mjs`, so that
 * submitting the same app again reuses it; each submit marks it used, and the next cluster submit
 * removes those unused for KEEP_MS. (A folder per submit in /tmp, which it was, piled up for good.)
 *
 * The folder is `$XDG_CACHE_HOME/wick/submitted`, else `~/.cache/wick/submitted`, or
 * `WICK_SUBMITTED_DIR`. Should it not be writable, the bundle stays where it was made.
 */
export function keptBundlesDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.WICK_SUBMITTED_DIR) return env.WICK_SUBMITTED_DIR;
  return join(env.XDG_CACHE_HOME || join(os.homedir(), '.cache'), 'wick', 'submitted');
}

/**
 * Moves a freshly made bundle (in a folder of its own, which is removed) to the kept bundles, and
 * returns the app with the kept file.
 */
export async function keepForCluster(
  app: BundledApp,
  dir = keptBundlesDir(),
  now = Date.now(),
): Promise<BundledApp> {
  try {
    const bytes = await readFile(app.bundle);
    const hash = createHash('sha256').update(bytes).digest('hex').slice(0, 32);
    const kept = join(dir, hash, basename(app.bundle));
    const at = new Date(now);
    try {
      await utimes(dirname(kept), at, at);
      await stat(kept);
    } catch {
      await mkdir(dirname(kept), { recursive: true });
      // Whole or not at all, should two submits of the same app race.
      const partial = `${kept}.${process.pid}.partial`;
      await copyFile(app.bundle, partial);
      await rename(partial, kept);
      await utimes(dirname(kept), at, at);
    }
    await rm(dirname(app.bundle), { recursive: true, force: true });
    await removeUnused(dir, now).catch(() => {});
    return { ...app, bundle: kept };
  } catch (err) {
    log.debug(
      `Cannot keep ${app.bundle} in ${dir}: ${(err as Error).message}; it stays where it is`,
    );
    return app;
  }
}

/** Removes the kept bundles not submitted for KEEP_MS (by their folder's modification time). */
async function removeUnused(dir: string, now: number): Promise<void> {
  for (const name of await readdir(dir)) {
    const path = join(dir, name);
    try {
      if (now - (await stat(path)).mtimeMs > KEEP_MS)
        await rm(path, { recursive: true, force: true });
    } catch {
      // Removed meanwhile by another submit.
    }
  }
}
