import { closeSync, fstatSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import { madeLogs } from '../../logs/madeLogs.js';
import { getLogger } from '../../util/log.js';
import { killProcessTree } from './kill.js';
import { type Launched, type LaunchSpec, newMarker, spawnMarked } from './launch.js';

const log = getLogger('ExecutorPrestart');

/** Environment variables Node reads while it starts: a standby started without them cannot honour them. */
const STARTUP_ENV = /^(?:NODE_|UV_)/;
/**
 * Blank room in the standby's command line: once launched it shows the launch's command line
 * there (process.title can only reuse the space of the original arguments), so that `ps` and the
 * tools that look for an application's executors by `--app-id` find it as they find any other.
 */
const TITLE_ROOM = ' '.repeat(2048);

interface Standby {
  stdin: Writable;
  pid: number;
  marker: string;
  dir: string;
  out: number;
  err: number;
  exited: Launched['exited'];
  gone: boolean;
}

/**
 * One Wick executor process started ahead of need, so that launching a Wick application's
 * executor costs milliseconds instead of a Node start-up and a code load (most of the time from
 * submit to a running executor). Spark has nothing like it: a JVM's start-up is amortised over long
 * jobs, while Wick promises interactive latency.
 *
 * The standby (`wick executor-standby`) has loaded the executor's code and waits for one line on
 * stdin: the argv, directory and environment of the launch it becomes. Until then it writes
 * nothing, to files in `<work dir>/.prestart/`; `take` writes the stderr header, moves the two files
 * into the executor's directory (its open descriptors follow them), and hands it the launch. From
 * there on it is the same as a process `launch` started: its own process group, the marker its
 * descendants carry, stdout and stderr in the executor's directory, `wick executor` parsing the
 * same argv. Only a launch of this Wick's own executor command qualifies; anything else (another
 * program, another Wick, start-up settings such as NODE_OPTIONS in the application's environment)
 * is spawned as usual.
 */
export class ExecutorPrestarter {
  private standby: Standby | undefined;
  private stopped = false;

  constructor(
    private readonly workDir: string,
    /** `[node, wick.cjs]`: the command prefix a launch must have to be served by a standby. */
    private readonly command: readonly [string, string],
    private readonly killTimeoutMs: number,
    /**
     * Task threads the standby starts while it waits: the cores the executor it becomes will most
     * likely have (by default an executor takes all of its worker's free cores). Another number
     * costs that executor a new pool, as without a standby.
     */
    private readonly threads = 1,
    /**
     * The memory (MiB) of the executor it will most likely become (wick.executor.memory as this
     * worker has it): its threads' heaps are fixed when they start (taskPool.ts), so another
     * memory costs that executor a new pool too.
     */
    private readonly memoryMB?: number,
  ) {}

  /** The standby's pid, if there is one. */
  get standbyPid(): number | undefined {
    return this.standby?.pid;
  }

  /** Starts a standby if there is none. */
  fill(): void {
    if (this.stopped || this.standby) return;
    try {
      this.standby = this.spawn();
    } catch (err) {
      log.warn(`Could not start a standby executor process: ${(err as Error).message}`);
    }
  }

  /**
   * The standby, turned into the process `spec` describes; undefined when the spec does not
   * qualify or no usable standby is there (then the caller spawns as usual).
   */
  take(spec: LaunchSpec): Launched | undefined {
    const s = this.standby;
    if (!s || !this.qualifies(spec)) return undefined;
    this.standby = undefined;
    try {
      // Anything written already (a warning from Node, a crash) would land above the header.
      if (s.gone || fstatSync(s.out).size > 0 || fstatSync(s.err).size > 0)
        throw new Error('it is gone or wrote output before its launch');
      writeSync(s.err, `${spec.header}\n${'='.repeat(40)}\n\n`);
      renameSync(join(s.dir, 'stdout'), join(spec.cwd, 'stdout'));
      renameSync(join(s.dir, 'stderr'), join(spec.cwd, 'stderr'));
      madeLogs.record(join(spec.cwd, 'stdout'), s.out);
      madeLogs.record(join(spec.cwd, 'stderr'), s.err);
      s.stdin.end(`${JSON.stringify({ argv: spec.argv, cwd: spec.cwd, env: spec.env })}\n`);
    } catch (err) {
      log.warn(`Standby executor process ${s.pid} unusable (${(err as Error).message}); spawning`);
      void this.discard(s);
      return undefined;
    } finally {
      closeFds(s);
      rmSync(s.dir, { recursive: true, force: true });
    }
    log.debug(`Executor launch served by standby process ${s.pid}`);
    return { pid: s.pid, marker: s.marker, exited: s.exited };
  }

  /** Kills the standby (worker shutdown); none is started after this. */
  async stop(): Promise<void> {
    this.stopped = true;
    const s = this.standby;
    this.standby = undefined;
    if (s) await this.discard(s);
  }

  private qualifies(spec: LaunchSpec): boolean {
    const [node, cli, command] = spec.argv;
    return (
      spec.append !== true &&
      node === this.command[0] &&
      cli === this.command[1] &&
      command === 'executor' &&
      !Object.keys(spec.env).some((k) => STARTUP_ENV.test(k))
    );
  }

  private spawn(): Standby {
    const marker = newMarker();
    const dir = join(this.workDir, '.prestart', marker);
    mkdirSync(dir, { recursive: true });
    const out = openSync(join(dir, 'stdout'), 'w');
    const err = openSync(join(dir, 'stderr'), 'w');
    // Shares the descriptions of `out` and `err`: the header written through `err` comes first.
    const args = [
      this.command[1],
      'executor-standby',
      '--threads',
      String(this.threads),
      ...(this.memoryMB === undefined ? [] : ['--memory', String(this.memoryMB)]),
      TITLE_ROOM,
    ];
    const child = spawnMarked(this.command[0], args, {
      // Not `dir`, which take() removes: until the standby has read its launch and moved to the
      // executor's folder, it must stand in one that stays. A task thread still starting then
      // asks for the process's working directory, and a removed one ended the executor at once
      // (ENOENT from process.cwd(), exit 1), a race of a launch that takes a standby still loading.
      cwd: join(this.workDir, '.prestart'),
      env: {},
      marker,
      stdin: 'pipe',
      out,
      err,
    });
    if (child.pid === undefined) {
      closeSync(out);
      closeSync(err);
      throw new Error(`cannot spawn ${this.command[0]}`);
    }
    // An unused standby must not keep the worker's event loop alive.
    child.unref();
    (child.stdin as unknown as { unref?: () => void }).unref?.();
    child.stdin.on('error', () => {});
    const standby: Standby = {
      stdin: child.stdin,
      pid: child.pid,
      marker,
      dir,
      out,
      err,
      gone: false,
      exited: child.then((r) => ({ exitCode: r.exitCode, signal: r.signal })),
    };
    void standby.exited.then(() => {
      standby.gone = true;
      if (this.standby === standby) {
        log.warn(`Standby executor process ${standby.pid} exited unused; see ${dir}/stderr`);
        this.standby = undefined;
      }
    });
    return standby;
  }

  private async discard(s: Standby): Promise<void> {
    closeFds(s);
    await killProcessTree(s.pid, s.marker, this.killTimeoutMs, s.gone);
    rmSync(s.dir, { recursive: true, force: true });
  }
}

function closeFds(s: Standby): void {
  for (const fd of [s.out, s.err]) {
    try {
      closeSync(fd);
    } catch {
      // Already closed.
    }
  }
  s.out = -1;
  s.err = -1;
}
