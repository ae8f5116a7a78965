/**
 * Real Wick daemons for integration tests: `wick master` and `wick worker` run from the bundle
 * (dist/wick.cjs, built by `npm run build`; `npm test` builds first) as child processes on
 * loopback. Each gets a pipe on stdin and --exit-with-parent, so it dies with the test process even
 * if that is killed; each is also killed when its test ends. A daemon prints one JSON line on
 * stdout once it is ready; everything else it says goes to stderr, kept here for assertions.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const WICK = join(ROOT, 'bin', 'wick.js');
const BUNDLE = join(ROOT, 'dist', 'wick.cjs');

/** How long a stopped daemon gets to exit by itself before it is SIGKILLed (cleanup only). */
const STOP_GRACE_MS = 5_000;

function checkBuilt(): void {
  if (!existsSync(BUNDLE)) {
    throw new Error(`${BUNDLE} is missing: run \`npm run build\` before these tests`);
  }
}

/** Every daemon started and not yet exited, so that a test file can check it left none behind. */
const running = new Set<Daemon>();

/** A `wick` daemon process. */
export class Daemon {
  stderr = '';
  stdout = '';
  readonly exited: Promise<number | null>;

  constructor(
    readonly child: ChildProcess,
    readonly label: string,
  ) {
    running.add(this);
    this.exited = new Promise((resolve) =>
      child.once('exit', (code) => {
        running.delete(this);
        resolve(code);
      }),
    );
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (d: string) => {
      this.stderr += d;
      if (process.env.WICK_TEST_DAEMON_LOGS === '1') process.stderr.write(`[${label}] ${d}`);
    });
  }

  /** Daemons of this process that have not exited. */
  static running(): Daemon[] {
    return [...running];
  }

  get pid(): number {
    return this.child.pid as number;
  }

  get isRunning(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Sends `signal` (SIGKILL by default) and resolves once the process has exited. */
  kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<number | null> {
    if (this.isRunning) this.child.kill(signal);
    return this.exited;
  }

  /** Sends a signal without waiting (SIGSTOP, SIGCONT). */
  signal(signal: NodeJS.Signals): void {
    if (this.isRunning) this.child.kill(signal);
  }

  /**
   * A clean stop: SIGCONT (in case a test stopped it), SIGTERM, then SIGKILL if it has not exited
   * within a grace period. Resolves with the exit code (null when killed by a signal).
   */
  async stop(): Promise<number | null> {
    if (!this.isRunning) return this.exited;
    this.child.kill('SIGCONT');
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.kill('SIGKILL'), STOP_GRACE_MS);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Resolves once stderr, from offset `from` on, matches `pattern`; rejects if the process exits
   * first. No deadline of its own: the test's timeout ends a wait that never succeeds.
   */
  waitForStderr(pattern: RegExp, from = 0): Promise<RegExpExecArray> {
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        const m = pattern.exec(this.stderr.slice(from));
        if (!m) return false;
        cleanup();
        resolve(m);
        return true;
      };
      const onData = () => {
        check();
      };
      const onExit = () => {
        // Output may still be in the pipe when 'exit' fires; 'close' comes after it.
        this.child.once('close', () => {
          if (!check()) {
            cleanup();
            reject(
              new Error(
                `${this.label} exited before its stderr matched ${pattern}:\n${this.stderr}`,
              ),
            );
          }
        });
      };
      const cleanup = () => {
        this.child.stderr?.off('data', onData);
        this.child.off('exit', onExit);
      };
      this.child.stderr?.on('data', onData);
      this.child.once('exit', onExit);
      check();
    });
  }
}

/**
 * Starts a process as `child_process.spawn` would; the multi-host harness (hosts.ts) passes one
 * that runs it on a simulated host.
 */
export type Launch = (
  file: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv },
) => ChildProcess;

const launchHere: Launch = (file, args, options) =>
  spawn(file, args, { ...options, stdio: ['pipe', 'pipe', 'pipe'] });

/** Spawns `wick <args>` and waits for its first stdout line (JSON). */
async function spawnDaemon<T>(
  t: TestContext | undefined,
  label: string,
  args: string[],
  env: NodeJS.ProcessEnv | undefined,
  cleanup?: () => void,
  launch: Launch = launchHere,
): Promise<{ daemon: Daemon; ready: T }> {
  checkBuilt();
  const child = launch(process.execPath, [WICK, ...args], {
    cwd: ROOT,
    env: { ...process.env, WICK_MASTER: undefined, ...env },
  });
  const daemon = new Daemon(child, label);
  t?.after(async () => {
    await daemon.stop();
    cleanup?.();
  });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const first = await new Promise<string>((resolve, reject) => {
    lines.once('line', resolve);
    child.once('close', (code, signal) =>
      reject(
        new Error(`${label} exited (${code ?? signal}) before it was ready:\n${daemon.stderr}`),
      ),
    );
  });
  lines.on('line', (l) => {
    daemon.stdout += `${l}\n`;
  });
  return { daemon, ready: JSON.parse(first) as T };
}

function confArgs(conf: Record<string, string | number | boolean> | undefined): string[] {
  return Object.entries(conf ?? {}).flatMap(([k, v]) => ['--conf', `${k}=${v}`]);
}

export interface MasterOptions {
  host?: string;
  /** RPC port; 0 (default) picks a free one. */
  port?: number;
  webUiPort?: number;
  /** --conf pairs, e.g. { 'wick.worker.timeout': '1s' }. */
  conf?: Record<string, string | number | boolean>;
  env?: NodeJS.ProcessEnv;
  /** Extra command-line arguments. */
  args?: string[];
  /** How the process is started (default: here, on loopback). */
  launch?: Launch;
  /** Names the daemon in errors and logs (default "master"). */
  label?: string;
}

export interface MasterProcess extends Daemon {
  /** wick://host:port */
  url: string;
  webUiUrl: string;
  /** host:port of the master's RpcEnv. */
  address: string;
  port: number;
}

/** Starts `wick master` on loopback; it is stopped when the test ends. */
export async function startMaster(
  t: TestContext | undefined,
  opts: MasterOptions = {},
): Promise<MasterProcess> {
  const host = opts.host ?? '127.0.0.1';
  const args = [
    'master',
    '--host',
    host,
    '--port',
    String(opts.port ?? 0),
    '--webui-port',
    String(opts.webUiPort ?? 0),
    '--print-ready',
    '--exit-with-parent',
    ...confArgs(opts.conf),
    ...(opts.args ?? []),
  ];
  const { daemon, ready } = await spawnDaemon<{ url: string; webUiUrl: string }>(
    t,
    opts.label ?? 'master',
    args,
    opts.env,
    undefined,
    opts.launch,
  );
  const address = ready.url.replace(/^wick:\/\//, '');
  return Object.assign(daemon, {
    url: ready.url,
    webUiUrl: ready.webUiUrl,
    address,
    port: Number(address.slice(address.lastIndexOf(':') + 1)),
  });
}

export interface WorkerOptions {
  host?: string;
  port?: number;
  cores?: number;
  /** e.g. "1g", "512m" (default 1g). */
  memory?: string;
  /** Default: a temporary directory removed when the test ends. */
  workDir?: string;
  conf?: Record<string, string | number | boolean>;
  env?: NodeJS.ProcessEnv;
  args?: string[];
  launch?: Launch;
  /** Names the daemon in errors and logs (default "worker"). */
  label?: string;
}

export interface WorkerProcess extends Daemon {
  /** host:port of the worker's RpcEnv. */
  address: string;
  workerId: string;
  workDir: string;
  /** http://host:port of the worker's web UI. */
  webUiUrl: string;
}

/** Starts `wick worker <masterUrl>` on loopback; it is stopped when the test ends. */
export async function startWorker(
  t: TestContext | undefined,
  masterUrl: string,
  opts: WorkerOptions = {},
): Promise<WorkerProcess> {
  let workDir = opts.workDir;
  let cleanup: (() => void) | undefined;
  if (workDir === undefined) {
    const dir = mkdtempSync(join(tmpdir(), 'wick-test-worker-'));
    workDir = dir;
    cleanup = () => rmSync(dir, { recursive: true, force: true });
  }
  const args = [
    'worker',
    masterUrl,
    '--host',
    opts.host ?? '127.0.0.1',
    '--port',
    String(opts.port ?? 0),
    '--webui-port',
    '0',
    '--cores',
    String(opts.cores ?? 2),
    '--memory',
    opts.memory ?? '1g',
    '--work-dir',
    workDir,
    '--print-ready',
    '--exit-with-parent',
    ...confArgs({ 'wick.local.dir': join(workDir, 'local'), ...opts.conf }),
    ...(opts.args ?? []),
  ];
  const { daemon, ready } = await spawnDaemon<{
    address: string;
    workerId: string;
    webUiUrl: string;
  }>(t, opts.label ?? 'worker', args, opts.env, cleanup, opts.launch);
  return Object.assign(daemon, {
    address: ready.address,
    workerId: ready.workerId,
    workDir,
    webUiUrl: ready.webUiUrl,
  });
}

export interface WickResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a one-shot `wick` command (status, logs, …) to completion. */
export function wick(args: string[], env?: NodeJS.ProcessEnv): Promise<WickResult> {
  checkBuilt();
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [WICK, ...args],
      { cwd: ROOT, env: { ...process.env, WICK_MASTER: undefined, ...env } },
      (err, stdout, stderr) => {
        const code = err ? ((err as { code?: unknown }).code as number | null) : 0;
        resolve({ code: typeof code === 'number' ? code : null, stdout, stderr });
      },
    );
  });
}
