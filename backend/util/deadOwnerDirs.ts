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

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: alive, under another user.
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}
