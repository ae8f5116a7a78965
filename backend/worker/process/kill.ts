import { readdir, readFile } from 'node:fs/promises';
import treeKill from 'tree-kill';
import { getLogger } from '../../util/log.js';
import { MARKER_VAR } from './launch.js';

const log = getLogger('ProcessKiller');

/**
 * Kills everything a launched child started, whatever it did to get away:
 * - its process group (the child leads one): catches descendants orphaned when their parent died;
 * - its process tree (tree-kill walks `ps`): catches descendants that called setsid;
 * - every process whose environment carries the child's marker (Linux /proc): catches descendants
 *   that did both, i.e. daemonised.
 * SIGTERM first; whatever is left after the grace period gets SIGKILL. Zombies count as gone.
 */
export async function killProcessTree(
  pid: number,
  marker: string,
  graceMs: number,
  rootExited = false,
): Promise<void> {
  if (pid <= 0) return;
  await signalEverything(pid, marker, 'SIGTERM', rootExited);
  if (await allGone(pid, marker, graceMs, rootExited)) return;
  log.info(`Process tree of ${pid} still running ${graceMs} ms after SIGTERM; sending SIGKILL`);
  await signalEverything(pid, marker, 'SIGKILL', rootExited);
  if (!(await allGone(pid, marker, 5000, rootExited))) {
    log.warn(
      `Some processes of ${pid}'s tree survived SIGKILL: ${[...(await survivors(pid, marker, rootExited))].join(', ')}`,
    );
  }
}

/**
 * After a launched child exited by itself: kills whatever it left running (its group, its marked
 * descendants). Never throws; a failure is logged.
 */
export async function sweep(
  launched: { pid: number; marker: string },
  graceMs: number,
): Promise<void> {
  try {
    // The root has exited and been reaped, so its pid may already belong to someone else: only
    // its group and the marked processes are ours to signal.
    await killProcessTree(launched.pid, launched.marker, graceMs, true);
  } catch (err) {
    log.warn(`Could not clean up after process ${launched.pid}`, err);
  }
}

async function signalEverything(
  pid: number,
  marker: string,
  signal: NodeJS.Signals,
  rootExited: boolean,
): Promise<void> {
  const marked = await markedPids(marker);
  if (!rootExited) {
    await new Promise<void>((resolve) => {
      // tree-kill reports ESRCH-like failures through the callback; they only mean "already gone".
      treeKill(pid, signal, () => resolve());
    });
  }
  signal1(-pid, signal);
  for (const p of marked) signal1(p, signal);
}

function signal1(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ESRCH' && code !== 'EPERM') log.warn(`kill(${pid}, ${signal}) failed`, err);
  }
}

async function allGone(
  pid: number,
  marker: string,
  waitMs: number,
  rootExited: boolean,
): Promise<boolean> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    if ((await survivors(pid, marker, rootExited)).size === 0) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function survivors(pid: number, marker: string, rootExited: boolean): Promise<Set<number>> {
  const alive = new Set<number>();
  if (!rootExited && (await isAlive(pid))) alive.add(pid);
  if (await groupAlive(pid)) alive.add(-pid);
  for (const p of await markedPids(marker)) if (await isAlive(p)) alive.add(p);
  return alive;
}

/**
 * A live member in the group. kill(-pgid, 0) also succeeds while the group holds only zombies,
 * and orphans killed here are reaped by init, which in many containers does it lazily (seconds
 * later) or never: so on Linux, look for a member that is not a zombie.
 */
async function groupAlive(pgid: number): Promise<boolean> {
  try {
    process.kill(-pgid, 0);
  } catch {
    return false;
  }
  if (process.platform !== 'linux') return true;
  let entries: string[];
  try {
    entries = await readdir('/proc');
  } catch {
    return true;
  }
  const live = await Promise.all(
    entries.map(async (name) => {
      if (!/^\d+$/.test(name)) return false;
      try {
        const stat = await readFile(`/proc/${name}/stat`, 'utf8');
        const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        return Number(f[2]) === pgid && f[0] !== 'Z';
      } catch {
        return false;
      }
    }),
  );
  return live.includes(true);
}

/** Alive and not a zombie waiting to be reaped. */
async function isAlive(pid: number): Promise<boolean> {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return process.platform !== 'linux';
  }
}

/** Pids whose environment carries WICK_PROCESS_MARKER=marker (Linux only; empty elsewhere). */
export async function markedPids(marker: string): Promise<number[]> {
  if (process.platform !== 'linux') return [];
  const needle = `${MARKER_VAR}=${marker}\0`;
  let entries: string[];
  try {
    entries = await readdir('/proc');
  } catch {
    return [];
  }
  const found: number[] = [];
  await Promise.all(
    entries.map(async (name) => {
      if (!/^\d+$/.test(name) || Number(name) === process.pid) return;
      try {
        const env = await readFile(`/proc/${name}/environ`, 'latin1');
        if (env.includes(needle)) found.push(Number(name));
      } catch {
        // Gone already, or not ours to read.
      }
    }),
  );
  return found;
}
