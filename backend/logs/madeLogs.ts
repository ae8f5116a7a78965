import { fstatSync, realpathSync } from 'node:fs';

/**
 * The stdout and stderr files this process made for its children, by real path: the device and
 * inode each had when made. A log is served only when it is still that file (openLogFile): an
 * application's code may replace its own log with a hard link to another file of the worker's
 * user (the cluster secret, another application's output), which opening without following links
 * does not stop — a hard link is no link to O_NOFOLLOW. The link count is checked as well (a
 * planted link keeps the target's count above one while the target exists).
 *
 * One per process: the worker's launches (process/launch.ts, the standby's take) record here, and
 * its log readers (the RPC handlers, the worker's web UI) check here.
 */
export class MadeLogs {
  private readonly files = new Map<string, { dev: number; ino: number }>();

  /** Records the file open as `fd`, at `path`. */
  record(path: string, fd: number): void {
    try {
      const st = fstatSync(fd);
      const key = realpathSync(path);
      // Bound: the oldest go first; a worker keeps its logs' runners far fewer than this.
      if (this.files.size >= MAX_RECORDED) {
        const first = this.files.keys().next().value as string;
        this.files.delete(first);
      }
      this.files.delete(key);
      this.files.set(key, { dev: st.dev, ino: st.ino });
    } catch {
      // The file went meanwhile: nothing to serve.
    }
  }

  /** Why the opened file at `path` (its real path) is not the log that was made there, if it is not. */
  problem(path: string, st: { dev: number; ino: number; nlink: number }): string | undefined {
    if (st.nlink > 1) return `it has ${st.nlink} links (a log the worker made has one)`;
    const made = this.files.get(path);
    // One this worker did not make (an earlier worker's, in the same work dir) is served with its
    // one link. (A link planted beside a file since deleted would pass: confined applications
    // cannot reach the work dir to plant one, and docs/security.md says so for open ones.)
    if (!made) return undefined;
    if (made.dev !== st.dev || made.ino !== st.ino) {
      return 'it is not the file the worker made there (replaced since)';
    }
    return undefined;
  }
}

const MAX_RECORDED = 200_000;

/** This process's. */
export const madeLogs = new MadeLogs();
