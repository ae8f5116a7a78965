import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { getLogger } from '../util/log.js';

const log = getLogger('Worker');

/**
 * Applications' local dirs (wick.local.dir): one per root for each application, made on its first
 * executor here, deleted once the master says the application finished and none of its executors
 * runs here any more (Spark's appDirectories and maybeCleanupApplication), and whatever is left at
 * the worker's shutdown. A dir stays listed until it is deleted, so that a shutdown during a
 * cleanup still deletes it.
 */
export class AppDirectories {
  private readonly dirs = new Map<string, string[]>();
  private readonly finished = new Set<string>();
  /** Applications whose dirs are being made: a second launch meanwhile waits for the same. */
  private readonly making = new Map<string, Promise<string[]>>();

  constructor(
    /** The roots (wick.local.dir) under which each application gets a dir. */
    private readonly roots: readonly string[],
    /** Whether an executor of the application still runs here. */
    private readonly hasExecutors: (appId: string) => boolean,
  ) {}

  /**
   * The local dirs of an application, made the first time it is asked for: `adopt`'s, when it
   * gives some (a confined standby's, one per root, already named as here: prestart.ts), else
   * fresh ones. Two launches of one application at once get the same dirs.
   */
  async dirsFor(appId: string, adopt?: () => string[] | undefined): Promise<string[]> {
    const dirs = this.dirs.get(appId);
    if (dirs) return dirs;
    let making = this.making.get(appId);
    if (!making) {
      const adopted = adopt?.();
      if (adopted && adopted.length === this.roots.length) {
        this.dirs.set(appId, adopted);
        return adopted;
      }
      making = Promise.all(
        this.roots.map(async (root) => {
          await mkdir(root, { recursive: true });
          return mkdtemp(join(root, `wick-executor-${appId}-`));
        }),
      ).finally(() => this.making.delete(appId));
      this.making.set(appId, making);
      this.dirs.set(appId, await making);
    }
    return making;
  }

  /** The dirs made for an application and not deleted yet. */
  existing(appId: string): readonly string[] {
    return this.dirs.get(appId) ?? [];
  }

  /** The applications whose dirs are made and not deleted yet. */
  applications(): string[] {
    return [...this.dirs.keys()];
  }

  /** The master said the application finished: its dirs go once its executors here are done. */
  async applicationFinished(appId: string): Promise<void> {
    this.finished.add(appId);
    await this.cleanupIfDone(appId);
  }

  /** Deletes a finished application's dirs if none of its executors runs here any more. */
  async cleanupIfDone(appId: string): Promise<void> {
    if (!this.finished.has(appId) || this.hasExecutors(appId)) return;
    // Leaving `finished` first keeps a second call meanwhile from deleting them again.
    this.finished.delete(appId);
    for (const dir of this.dirs.get(appId) ?? []) {
      log.info(`Cleaning up local directories for application ${appId}: ${dir}`);
      await rm(dir, { recursive: true, force: true });
    }
    this.dirs.delete(appId);
  }

  /**
   * Deletes every dir left, at shutdown: the executors are dead by then, and a worker started
   * later does not know of the dirs (Spark leaves them to its executors' shutdown hooks). Those of
   * a finished application may still be being deleted, and the process exits once this returns:
   * an embedded cluster stopped right after its last application, as `wick submit --master local`
   * does, left them in the temp folder.
   */
  async removeAll(): Promise<void> {
    const dirs = [...this.dirs.values()].flat();
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
    this.dirs.clear();
  }
}
