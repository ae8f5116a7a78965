import type { Dirent } from 'node:fs';
import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { WickConf } from '../conf/WickConf.js';
import { WorkerConf } from '../conf/worker.js';
import type { Clock, TimerHandle } from '../util/clock.js';
import { getLogger } from '../util/log.js';
import { WorkDirCleanup } from './messages.js';

const log = getLogger('Worker');

export interface WorkDirCleanerOptions {
  readonly workDir: string;
  /** The roots of applications' local dirs (wick.local.dir), where their shuffle files are. */
  readonly localDirs?: readonly string[];
  readonly conf: WickConf;
  readonly clock: Clock;
  /**
   * The names of the work dir's entries still in use: running applications' ids (also those
   * whose local dirs this worker still keeps: with the shuffle service their map outputs outlive
   * their executors), drivers' ids.
   */
  readonly inUse: () => Iterable<string>;
  /** Posts a self-message to the worker's inbox (the periodic cleanup runs there). */
  readonly post: (message: ReturnType<typeof WorkDirCleanup>) => void;
  /** The worker's RpcEnv is stopping: no cleanup is scheduled any more. */
  readonly stopped: () => boolean;
}

/**
 * Deletes directories in the work dir that belong to no running application or driver and in
 * which nothing changed for wick.worker.cleanup.appDataTtl (Spark's WorkDirCleanup), every
 * wick.worker.cleanup.interval once the worker registered, if wick.worker.cleanup.enabled. The
 * worker's own folders (named with a dot: `.prestart`, where a standby executor waits) are not
 * application data and stay, however long a standby has waited.
 *
 * The same goes for applications' local dirs (`wick-executor-<appId>-…` under each
 * wick.local.dir, where shuffle files are): a worker deletes its own at ApplicationFinished and at
 * shutdown (AppDirectories), but one that crashed (SIGKILL, a lost host) left them, and its next
 * run does not know them. Spark leaves these to its executors' shutdown hooks and its shuffle
 * service's applicationRemoved, neither of which runs after a crash. Only entries named so are
 * looked at: a local dir root is often the shared temp folder.
 */
export class WorkDirCleaner {
  private timer: TimerHandle | undefined;

  constructor(private readonly o: WorkDirCleanerOptions) {}

  /** Schedules the periodic cleanup, if enabled and not scheduled already (on registration). */
  start(): void {
    if (!this.o.conf.get(WorkerConf.cleanupEnabled) || this.timer) return;
    log.info(
      `Worker cleanup enabled; old application directories will be deleted in: ${this.o.workDir}`,
    );
    this.schedule();
  }

  stop(): void {
    this.timer?.cancel();
  }

  /** One cleanup, now; never throws (a failure is logged). */
  async run(): Promise<void> {
    const inUse = new Set(this.o.inUse());
    const cutoff = this.o.clock.now() - this.o.conf.get(WorkerConf.appDataTtl);
    const workDir = this.o.workDir;
    try {
      for (const entry of await readdir(workDir, { withFileTypes: true })) {
        if (!entry.isDirectory() || inUse.has(entry.name) || entry.name.startsWith('.')) continue;
        const dir = join(workDir, entry.name);
        if (await hasNewerThan(dir, cutoff)) continue;
        log.info(`Removing directory: ${dir}`);
        await rm(dir, { recursive: true, force: true });
      }
    } catch (err) {
      log.error('App dir cleanup failed', err);
    }
    for (const root of this.o.localDirs ?? []) await this.cleanLocalRoot(root, inUse, cutoff);
  }

  private async cleanLocalRoot(root: string, inUse: Set<string>, cutoff: number): Promise<void> {
    let entries: Dirent[];
    try {
      entries = await readdir(root, { withFileTypes: true });
    } catch {
      return; // Not made yet: no application ran here.
    }
    for (const entry of entries) {
      const appId = LOCAL_DIR.exec(entry.name)?.[1];
      if (!entry.isDirectory() || appId === undefined || inUse.has(appId)) continue;
      const dir = join(root, entry.name);
      try {
        if ((await stat(dir)).mtimeMs > cutoff || (await hasNewerThan(dir, cutoff))) continue;
        log.info(`Removing local directory of application ${appId}: ${dir}`);
        await rm(dir, { recursive: true, force: true });
      } catch (err) {
        log.error(`Local dir cleanup of ${dir} failed`, err);
      }
    }
  }

  private schedule(): void {
    this.timer = this.o.clock.setTimeout(() => {
      if (this.o.stopped()) return;
      this.o.post(WorkDirCleanup({}));
      this.schedule();
    }, this.o.conf.get(WorkerConf.cleanupInterval));
  }
}

/** An application's local dir, as AppDirectories names it (mkdtemp adds six characters). */
const LOCAL_DIR = /^wick-executor-(.+)-[A-Za-z0-9]{6}$/;

async function hasNewerThan(dir: string, cutoff: number): Promise<boolean> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if ((await stat(p)).mtimeMs > cutoff) return true;
    if (entry.isDirectory() && (await hasNewerThan(p, cutoff))) return true;
  }
  return false;
}
