import { readFileSync } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Removes the folders `<dir>/<prefix>-<pid>` and `<dir>/<prefix>-<pid>-…` whose process is gone: what a process that was
 * SIGKILLed (or crashed) left of the temporary folders it removes when it stops. A folder whose
 * pid is alive is kept, whoever that process is now (a reused pid only delays the removal), and
 * so is one this user may not remove. Returns the folders removed.
 */
export async function removeDeadOwnerDirs(prefix: string, dir = tmpdir()): Promise<string[]> {
  const pattern = new RegExp(`^${prefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}-(\\d+)(?:-|$)`);
  const removed: string[] = [];
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return removed;
  }
  for (const name of names) {
    const pid = Number(pattern.exec(name)?.[1]);
    if (!pid || pid === process.pid || alive(pid)) continue;
    try {
      await rm(join(dir, name), { recursive: true, force: true });
      removed.push(join(dir, name));
    } catch {
      // Not ours to remove, or removed meanwhile.
    }
  }
  return removed;
}

/** Whether process `pid` is alive (a zombie is not). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    // EPERM: alive, under another user.
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
  // A zombie answers signals until its parent reaps it, but it is gone (Linux; elsewhere it
  // counts as alive until reaped): a SIGKILLed agent is one for a moment, while the extension
  // starts the next, which sweeps.
  return procState(pid) !== 'Z';
}

/** The process's state letter from /proc/PID/stat (R, S, Z…), if there is one. */
function procState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  } catch {
    return undefined;
  }
}
