/**
 * Stops one daemon by its pid file, as Spark's `spark-daemon.sh stop` does (SIGTERM, then the pid
 * file removed), and, as Hadoop's daemon scripts do after HADOOP_STOP_TIMEOUT, SIGKILL when it is
 * still there after a grace (wick.daemon.stopTimeout): a stop that returns means the daemon is
 * gone. A pid file whose process is gone, or is no longer this daemon (a recycled pid), is removed
 * without signalling anyone.
 */
import { readFileSync } from 'node:fs';
import type { DaemonDirs, DaemonKind } from './daemonFiles.js';
import { daemonFiles } from './daemonFiles.js';
import { readPidFile, removePidFile, runningDaemon } from './pidFile.js';

export type StopOutcome =
  | { readonly kind: 'stopped'; readonly pid: number; readonly killed: boolean }
  | { readonly kind: 'none' }
  | { readonly kind: 'stale'; readonly pid: number };

const POLL_MS = 100;

export async function stopDaemon(
  dirs: DaemonDirs,
  kind: DaemonKind,
  instance: number,
  stopTimeoutMs: number,
): Promise<StopOutcome> {
  const { pidFile } = daemonFiles(dirs, kind, instance);
  const pid = runningDaemon(pidFile, kind);
  if (pid === undefined) {
    const stale = readPidFile(pidFile);
    removePidFile(pidFile);
    return stale === undefined ? { kind: 'none' } : { kind: 'stale', pid: stale };
  }
  signal(pid, 'SIGTERM');
  const still = () => runningDaemon(pidFile, kind) === pid && !isZombie(pid);
  let killed = false;
  if (!(await gone(still, stopTimeoutMs))) {
    killed = true;
    // The daemon leads its own process group (it was started detached): what is left of it goes
    // too. Its executors lead groups of their own, which the worker stops on SIGTERM.
    if (groupOf(pid) === pid) signal(-pid, 'SIGKILL');
    signal(pid, 'SIGKILL');
    await gone(still, 10_000);
  }
  removePidFile(pidFile);
  return { kind: 'stopped', pid, killed };
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

/**
 * Whether `still` turned false within `withinMs`. It asks whether the pid is still this daemon,
 * not merely alive: a pid recycled meanwhile by another process must not be waited on, nor killed.
 */
async function gone(still: () => boolean, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (still()) {
    if (Date.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  return true;
}

/** A zombie has exited; its parent (not us: the daemon was detached) has not reaped it yet. */
function isZombie(pid: number): boolean {
  return statField(pid, 0) === 'Z';
}

function groupOf(pid: number): number | undefined {
  const g = statField(pid, 2);
  return g === undefined ? undefined : Number(g);
}

/** Field `i` after the command name of /proc/PID/stat (0: state, 2: process group). */
function statField(pid: number, i: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[i];
  } catch {
    return undefined;
  }
}
