/**
 * A daemon's pid file, and whether the process it names is still that daemon. A pid outlives its
 * process (the daemon was SIGKILLed, the machine crashed while /tmp was kept) and is reused by
 * another process; Spark's spark-daemon.sh checks that `ps -p PID -o comm=` is java. Wick checks
 * more narrowly that /proc/PID/cmdline runs Wick's CLI with this daemon's command, so neither
 * another program nor another kind of Wick daemon with a recycled pid is taken for it.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { DaemonKind } from './daemonFiles.js';

/** The pid written in `file`, or undefined when there is none (or it holds no pid). */
export function readPidFile(file: string): number | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`Cannot read pid file ${file}: ${(err as Error).message}`, { cause: err });
  }
  const m = /^\s*(\d{1,10})\s*$/.exec(text);
  return m ? Number(m[1]) : undefined;
}

export function writePidFile(file: string, pid: number): void {
  writeFileSync(file, `${pid}\n`, { mode: 0o644 });
}

export function removePidFile(file: string): void {
  rmSync(file, { force: true });
}

/** The argv of `pid`; undefined when the process is gone (or /proc cannot say). */
export function commandLineOf(pid: number): string[] | undefined {
  try {
    const raw = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return raw.split('\0').filter((a) => a !== '');
  } catch {
    return undefined;
  }
}

/** Whether `argv` is a Wick CLI (bin/wick.js, dist/wick.cjs) running `kind`'s daemon. */
export function isWickDaemon(argv: readonly string[], kind: DaemonKind): boolean {
  const cli = argv.findIndex((a) => /(^|\/)wick(\.c?js)?$/.test(a));
  return cli >= 0 && argv[cli + 1] === kind;
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: alive, but another user's.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The pid of the running `kind` daemon that `file` names, or undefined. */
export function runningDaemon(file: string, kind: DaemonKind): number | undefined {
  const pid = readPidFile(file);
  if (pid === undefined || !isAlive(pid)) return undefined;
  const argv = commandLineOf(pid);
  // Without /proc (not Linux) a live pid is taken at its word, as Spark's check of `ps` would.
  if (argv === undefined) return process.platform === 'linux' ? undefined : pid;
  return isWickDaemon(argv, kind) ? pid : undefined;
}
