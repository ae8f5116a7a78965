import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface, type Interface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/**
 * Server processes for benchmarks. Each runs `node --import tsx SCRIPT` in its own process group,
 * prints one JSON line on stdout when it is ready, and is stopped by stop() or stopAll(): SIGTERM
 * to the group, SIGKILL after a grace period, and always awaited until the child is reaped. The
 * child also gets a stdin pipe, and a server is expected to exit when it closes, so that even a
 * SIGKILLed benchmark leaves nothing behind. As a last resort an 'exit' hook SIGKILLs any group
 * still alive.
 */

const projectRoot = fileURLToPath(new URL('../../', import.meta.url));

export interface StartOptions {
  args?: readonly string[];
  /** Extra node flags before `--import tsx`, e.g. ['--cpu-prof']. */
  execArgv?: readonly string[];
  env?: NodeJS.ProcessEnv;
  /** How long the server may take to print its ready line. */
  readyTimeoutMs?: number;
}

export interface ServerProcess<T> {
  readonly pid: number;
  /** The server's ready line, parsed. */
  readonly ready: T;
  readonly exited: Promise<number | string | null>;
  /** The child itself (its stdin is a pipe the server may read commands from). */
  readonly child: ChildProcess;
  /** The server's stdout as lines, for any it prints after the ready line. */
  readonly lines: Interface;
  stop(): Promise<void>;
}

const live = new Set<Handle>();
let exitHookInstalled = false;

class Handle {
  done = false;
  readonly exited: Promise<number | string | null>;

  constructor(readonly child: ChildProcess) {
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.done = true;
        live.delete(this);
        resolve(code ?? signal);
      });
    });
  }

  signal(sig: NodeJS.Signals): void {
    const pid = this.child.pid;
    if (pid === undefined || this.done) return;
    for (const target of [-pid, pid]) {
      try {
        process.kill(target, sig);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
      }
    }
  }

  async stop(graceMs = 3000): Promise<void> {
    if (this.done) return;
    this.signal('SIGTERM');
    if (await settlesWithin(this.exited, graceMs)) return;
    this.signal('SIGKILL');
    if (!(await settlesWithin(this.exited, 5000))) {
      throw new Error(`server process ${this.child.pid} did not exit after SIGKILL`);
    }
  }
}

function settlesWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const t = setTimeout(() => resolve(false), ms);
    p.then(() => {
      clearTimeout(t);
      resolve(true);
    });
  });
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const h of live) h.signal('SIGKILL');
  });
}

/** Starts `node --import tsx script ...args` and waits for its first stdout line (JSON). */
export async function startServer<T>(
  script: string,
  options: StartOptions = {},
): Promise<ServerProcess<T>> {
  installExitHook();
  const child = spawn(
    process.execPath,
    [...(options.execArgv ?? []), '--import', 'tsx', script, ...(options.args ?? [])],
    {
      cwd: projectRoot,
      detached: true,
      stdio: ['pipe', 'pipe', 'inherit'],
      env: { ...process.env, ...options.env },
    },
  );
  const handle = new Handle(child);
  live.add(handle);
  // A closed stdin (the server exited) must not crash the benchmark with EPIPE.
  child.stdin?.on('error', () => {});
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  try {
    const ready = await firstLine<T>(lines, handle.exited, options.readyTimeoutMs ?? 20_000);
    return {
      pid: child.pid as number,
      ready,
      exited: handle.exited,
      child,
      lines,
      stop: () => handle.stop(),
    };
  } catch (err) {
    await handle.stop();
    throw new Error(`server ${script} failed to start: ${(err as Error).message}`, { cause: err });
  }
}

function firstLine<T>(lines: Interface, exited: Promise<unknown>, timeoutMs: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no ready line within ${timeoutMs} ms`)),
      timeoutMs,
    );
    lines.once('line', (line) => {
      clearTimeout(timer);
      // The interface keeps reading stdout, so a chatty server never blocks on a full pipe.
      try {
        resolve(JSON.parse(line) as T);
      } catch {
        reject(new Error(`ready line is not JSON: ${line.slice(0, 200)}`));
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`exited (${code}) before it was ready`));
    });
  });
}

/** Stops every server process still running and waits until each is reaped. */
export async function stopAll(): Promise<void> {
  await Promise.all([...live].map((h) => h.stop()));
}

/** Number of server processes not yet reaped (for a final sanity check). */
export function liveCount(): number {
  return live.size;
}

/** For a server script: exit when the benchmark that started it goes away (stdin closes). */
export function exitWithParent(cleanup: () => Promise<void> | void): void {
  let leaving = false;
  const leave = () => {
    if (leaving) return;
    leaving = true;
    Promise.resolve()
      .then(cleanup)
      .finally(() => process.exit(0));
  };
  process.stdin.on('end', leave);
  process.stdin.on('close', leave);
  process.stdin.resume();
  process.once('SIGTERM', leave);
  process.once('SIGINT', leave);
}
