/**
 * Looking at processes from a test (Linux /proc): whether a pid is still alive (a zombie waiting
 * to be reaped counts as gone), its parent, group and session, and which processes carry a
 * command-line token, so that a test can prove a kill left no survivor.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

interface Stat {
  state: string;
  ppid: number;
  pgid: number;
  sid: number;
}

/** The fields of /proc/<pid>/stat that matter here; undefined once the process is gone. */
export function procStat(pid: number): Stat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name is in parentheses and may itself contain spaces or parentheses.
  const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return { state: f[0] as string, ppid: Number(f[1]), pgid: Number(f[2]), sid: Number(f[3]) };
}

/** Running (or stopped, or sleeping): anything but gone or a zombie. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const st = procStat(pid);
  return st !== undefined && st.state !== 'Z' && st.state !== 'X';
}

/** Live pids whose command line contains `token` (pgrep -f), this process excluded. */
export function pgrep(token: string): number[] {
  const r = spawnSync('pgrep', ['-f', token], { encoding: 'utf8' });
  return r.stdout
    .split('\n')
    .filter(Boolean)
    .map(Number)
    .filter((p) => p !== process.pid && isAlive(p));
}

/** SIGKILLs whatever still carries `token`: a test's last resort, so that a failure leaks nothing. */
export function killByToken(token: string): void {
  for (const pid of pgrep(token)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone meanwhile.
    }
  }
}

/**
 * Polls `probe` every 10 ms until it returns something other than undefined or false, and returns
 * that. No deadline of its own: the test's timeout ends a wait that never succeeds; `signal` (the
 * test's) stops the polling then, with an error naming what was awaited. A number instead is a
 * deadline in ms, for a test whose step must not hang until the runner's timeout.
 */
export async function waitFor<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  signal?: AbortSignal | number,
): Promise<T> {
  const stop = typeof signal === 'number' ? AbortSignal.timeout(signal) : signal;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    if (stop?.aborted)
      throw new Error(
        `gave up waiting for ${what}${typeof signal === 'number' ? ` after ${signal} ms` : ''}`,
      );
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** The pids a child wrote, one per line, into a file; waits until `count` are there. */
export async function readPids(
  path: string,
  count: number,
  signal?: AbortSignal,
): Promise<number[]> {
  return waitFor(
    `${count} pids in ${path}`,
    () => {
      let text = '';
      try {
        text = readFileSync(path, 'utf8');
      } catch {
        return undefined;
      }
      const pids = text
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => /^\d+$/.test(l))
        .map(Number);
      return pids.length >= count ? pids : undefined;
    },
    signal,
  );
}
