import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { getLogger } from '../util/log.js';
import { WorkerConf } from './config.js';
import type { Worker } from './Worker.js';

const log = getLogger('Worker');

/**
 * Deletes directories in the work dir that belong to no running application or driver and in
 * which nothing changed for wick.worker.cleanup.appDataTtl (Spark's WorkDirCleanup). The worker's
 * own folders (named with a dot: `.prestart`, where a standby executor waits) are not application
 * data and stay, however long a standby has waited.
 */
export async function cleanupWorkDir(w: Worker): Promise<void> {
  const running = new Set<string>([
    ...[...w.executors.values()].map((r) => r.appId),
    ...w.drivers.keys(),
  ]);
  const cutoff = w.clock.now() - w.conf.get(WorkerConf.appDataTtl);
  try {
    for (const entry of await readdir(w.workDir, { withFileTypes: true })) {
      if (!entry.isDirectory() || running.has(entry.name) || entry.name.startsWith('.')) continue;
      const dir = join(w.workDir, entry.name);
      if (await hasNewerThan(dir, cutoff)) continue;
      log.info(`Removing directory: ${dir}`);
      await rm(dir, { recursive: true, force: true });
    }
  } catch (err) {
    log.error('App dir cleanup failed', err);
  }
}

async function hasNewerThan(dir: string, cutoff: number): Promise<boolean> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if ((await stat(p)).mtimeMs > cutoff) return true;
    if (entry.isDirectory() && (await hasNewerThan(p, cutoff))) return true;
  }
  return false;
}
