/**
 * One run of a command to completion, for benchmarks that time whole processes (`wick submit`,
 * `node -e 0`): spawned in its own process group, its output read line by line with the moment
 * each line arrived, killed (the whole group) if it overruns its time limit, and always awaited
 * until reaped. Should the benchmark itself exit meanwhile, an 'exit' hook SIGKILLs the group.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

export interface CommandLine {
  stream: 'stdout' | 'stderr';
  text: string;
  /** performance.now() when the benchmark read the line. */
  at: number;
}

export interface CommandRun {
  /** performance.now() right before the spawn. */
  startedAt: number;
  /** ms from just before the spawn to the 'exit' event. */
  ms: number;
  code: number | null;
  signal: NodeJS.Signals | null;
  lines: CommandLine[];
}

export interface CommandOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
  /** Called with each line as it arrives (e.g. to note when something was logged). */
  onLine?: (line: CommandLine) => void;
}

const live = new Set<number>();
let hookInstalled = false;

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}

export async function runCommand(
  file: string,
  args: readonly string[],
  options: CommandOptions = {},
): Promise<CommandRun> {
  if (!hookInstalled) {
    hookInstalled = true;
    process.on('exit', () => {
      for (const pid of live) killGroup(pid, 'SIGKILL');
    });
  }
  const lines: CommandLine[] = [];
  const startedAt = performance.now();
  const child = spawn(file, args, {
    cwd: options.cwd,
    env: options.env ?? process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const pid = child.pid;
  if (pid !== undefined) live.add(pid);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>(
    (resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (code, signal) => resolve({ code, signal, at: performance.now() }));
    },
  );
  const read = (stream: 'stdout' | 'stderr') =>
    new Promise<void>((resolve) => {
      const rl = createInterface({ input: child[stream] as NodeJS.ReadableStream });
      rl.on('line', (text) => {
        const line = { stream, text, at: performance.now() };
        lines.push(line);
        options.onLine?.(line);
      });
      rl.once('close', resolve);
    });
  const streams = Promise.all([read('stdout'), read('stderr')]);
  const timer = setTimeout(
    () => {
      if (pid !== undefined) killGroup(pid, 'SIGKILL');
    },
    options.timeoutMs ?? 5 * 60_000,
  );
  try {
    const { code, signal, at } = await exited;
    await streams;
    return { startedAt, ms: at - startedAt, code, signal, lines };
  } finally {
    clearTimeout(timer);
    if (pid !== undefined) {
      // Anything the command left behind in its group goes too.
      killGroup(pid, 'SIGKILL');
      live.delete(pid);
    }
  }
}
