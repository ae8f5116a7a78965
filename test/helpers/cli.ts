/**
 * Runs the built `wick` CLI (bin/wick.js → dist/wick.cjs) as a user would, and finds every process
 * a run started, however deep, by a marker in its environment (`WICK_TEST_MARK`, inherited by each
 * daemon and child): a master launched by `wick local-cluster` has no test path on its command
 * line, but it has the marker. Linux only (/proc).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
export const wickBin = join(repoRoot, 'bin', 'wick.js');

/** Fails early and plainly when the bundle is missing (`npm test` builds it first). */
export function assertBuilt(): void {
  if (!existsSync(join(repoRoot, 'dist', 'wick.cjs'))) {
    throw new Error('dist/wick.cjs is missing: run `npm run build` before the CLI tests');
  }
}

export interface RunOptions {
  /** Put into the environment as WICK_TEST_MARK, so that processes can be found (markedProcesses). */
  mark?: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

export interface WickProcess {
  child: ChildProcess;
  pid: number;
  /** Everything written so far. */
  stdout(): string;
  stderr(): string;
  /** Resolves when the process has exited (and its pipes are drained). */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The first stdout line; rejects, with stderr, if the process exits before writing one. */
  firstLine(): Promise<string>;
}

/** Starts `node bin/wick.js …args`; stdin is a pipe that stays open until the process ends. */
export function startWick(args: readonly string[], options: RunOptions = {}): WickProcess {
  // WICK_* settings of the test's own environment (a log level, a master) would change what runs;
  // but the run's shared folder, shown to confined executors, and whether its workers confine, are
  // the run's (scripts/test.mjs).
  const env: NodeJS.ProcessEnv = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) =>
        !k.startsWith('WICK_') ||
        k === 'WICK_EXECUTOR_SANDBOX_READ_ONLY_PATHS' ||
        k === 'WICK_EXECUTOR_SANDBOX',
    ),
  );
  Object.assign(env, options.env);
  if (options.mark) env.WICK_TEST_MARK = options.mark;
  const child = spawn(process.execPath, [wickBin, ...args], {
    cwd: options.cwd ?? repoRoot,
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout?.setEncoding('utf8').on('data', (s: string) => {
    out += s;
  });
  child.stderr?.setEncoding('utf8').on('data', (s: string) => {
    err += s;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal })),
  );
  const firstLine = () =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        const nl = out.indexOf('\n');
        if (nl >= 0) {
          child.stdout?.off('data', check);
          resolve(out.slice(0, nl));
        }
      };
      child.stdout?.on('data', check);
      check();
      void exited.then(({ code, signal }) =>
        reject(
          new Error(
            `wick ${args.join(' ')} exited (${code ?? signal}) before printing a line; stderr:\n${err}`,
          ),
        ),
      );
    });
  if (child.pid === undefined) throw new Error(`could not start ${wickBin}`);
  return { child, pid: child.pid, stdout: () => out, stderr: () => err, exited, firstLine };
}

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs a command that is expected to end by itself (killed after 30 s so that a test cannot hang). */
export async function runWick(
  args: readonly string[],
  options: RunOptions = {},
): Promise<RunResult> {
  const p = startWick(args, options);
  p.child.stdin?.end();
  const guard = setTimeout(() => p.child.kill('SIGKILL'), 30_000);
  const { code, signal } = await p.exited;
  clearTimeout(guard);
  return { code, signal, stdout: p.stdout(), stderr: p.stderr() };
}

/** Whether `pid` is a live process (a zombie is dead: it only waits to be reaped). */
export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The state follows the command name in parentheses, which may itself hold spaces or ')'.
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

export interface MarkedProcess {
  pid: number;
  cmdline: string;
}

/** The live processes whose environment holds WICK_TEST_MARK=`mark`. */
export function markedProcesses(mark: string): MarkedProcess[] {
  const needle = `WICK_TEST_MARK=${mark}`;
  const found: MarkedProcess[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    if (pid === process.pid) continue;
    try {
      const environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
      if (!environ.includes(needle) || !isAlive(pid)) continue;
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
      found.push({ pid, cmdline });
    } catch {
      // Gone while we looked, or not ours to read.
    }
  }
  return found;
}

/**
 * Waits until none of `pids` is alive, looking every 50 ms; returns those still alive when
 * `patienceMs` runs out (a generous bound that only keeps a broken run from hanging).
 */
export async function waitUntilGone(
  pids: readonly number[],
  patienceMs = 30_000,
): Promise<number[]> {
  const end = Date.now() + patienceMs;
  for (;;) {
    const left = pids.filter(isAlive);
    if (left.length === 0 || Date.now() > end) return left;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** SIGKILLs every process this test marked, by pid; for cleanup after a failure. */
export async function killMarked(mark: string): Promise<void> {
  const left = markedProcesses(mark);
  for (const p of left) {
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  await waitUntilGone(
    left.map((p) => p.pid),
    5_000,
  );
}
