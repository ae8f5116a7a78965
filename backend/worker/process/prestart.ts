import {
  closeSync,
  fstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { basename, delimiter, join, resolve } from 'node:path';
import type { Writable } from 'node:stream';
import { madeLogs } from '../../logs/madeLogs.js';
import { EXECUTOR_DIRS_ENV } from '../../protocol/childEnv.js';
import { getLogger } from '../../util/log.js';
import type { Sandbox } from '../sandbox/Sandbox.js';
import { killProcessTree } from './kill.js';
import { type Launched, type LaunchSpec, newMarker, spawnMarked } from './launch.js';
import { substituteVariables } from './substitute.js';

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
  /** Started in the worker's sandbox: what it was given, and whose it became (confined.ts). */
  confined?: ConfinedStandby;
}

/**
 * A confined standby (Prestart.confined): bwrap showed it, read-write, `dir` (its output files;
 * the executor's dir to be) and one fresh dir under each local dir root, `localDirs`. These are
 * the only places of its own it will ever see: the executor it becomes keeps them, renamed on the
 * host (a bind follows the inode) to `<work>/<app>/<exec>` and to the application's local dirs.
 */
interface ConfinedStandby {
  readonly localDirs: readonly string[];
  /** Set once its local dirs became an application's (handOverLocalDirs): their paths now. */
  handedTo?: { appId: string; dirs: readonly string[] };
}

/** Which launches a confining worker's standby can serve, and how it runs (Worker.ts). */
export interface ConfinedPrestart {
  sandbox: Sandbox;
  /** wick.local.dir, in the order the worker makes an application's local dirs (AppDirectories). */
  localDirRoots: readonly string[];
}

/** The first part of a confined standby's local dir's name; what follows cannot be an app id. */
const STANDBY_LOCAL_DIR = 'wick-executor-standby.';

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
    /**
     * Start the standby confined, as every launch of this worker runs (its sandbox): it serves
     * only the first executor of an application here, whose local dirs it brings (see
     * handOverLocalDirs).
     */
    private readonly confined?: ConfinedPrestart,
  ) {
    sweepLeftovers(join(workDir, '.prestart'), /^(\d+)-/);
    for (const root of confined?.localDirRoots ?? []) {
      sweepLeftovers(root, new RegExp(`^${STANDBY_LOCAL_DIR.replace('.', '\\.')}(\\d+)-`));
    }
  }

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
    if (s.confined) return this.takeConfined(s, spec);
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

  /**
   * A confining worker makes an application's local dirs on its first executor here: when the
   * standby can become that executor (its command qualifies), the standby's own local dirs become
   * the application's instead — renamed to the names AppDirectories gives (`wick-executor-<app>-…`),
   * which the standby, confined since its start, sees at their old paths. Returns their new paths,
   * or undefined (the worker then makes fresh dirs, and the launch spawns afresh).
   *
   * From here on the standby is that application's: only the launch of its executor with exactly
   * these dirs takes it (takeConfined); any other use discards it (dropHandedOver).
   */
  handOverLocalDirs(
    appId: string,
    command: { argv: readonly string[]; env: Record<string, string> },
  ): string[] | undefined {
    const s = this.standby;
    const c = s?.confined;
    const roots = this.confined?.localDirRoots ?? [];
    // As the runner fills it in ({{WICK_NODE}} {{WICK_CLI}} executor …, made on the driver's host).
    const argv = substituteVariables(command.argv, {});
    if (!s || !c || c.handedTo || s.gone || !this.qualifies({ argv, env: command.env })) {
      return undefined;
    }
    // Renamed before bwrap bound them, they would not be there for it to bind.
    if (!sandboxStarted(s.pid)) return undefined;
    const made: string[] = [];
    try {
      for (const [i, root] of roots.entries()) {
        // mkdtemp gives a name no other dir has; the rename replaces that empty dir at once.
        const target = mkdtempSync(join(root, `wick-executor-${appId}-`));
        made.push(target);
        renameSync(c.localDirs[i] as string, target);
      }
    } catch (err) {
      log.warn(
        `Standby executor process ${s.pid}: its local dirs could not become ${appId}'s (${(err as Error).message}); spawning`,
      );
      this.standby = undefined;
      void this.discard(s);
      for (const dir of made) rmSync(dir, { recursive: true, force: true });
      return undefined;
    }
    c.handedTo = { appId, dirs: made };
    return made;
  }

  /**
   * Discards a standby handed over to `appId` that its launch did not take (the launch failed
   * before it, or spawned for another reason): it can write to that application's local dirs, so
   * it serves no other. The next standby starts as usual.
   */
  dropHandedOver(appId: string): void {
    const s = this.standby;
    if (s?.confined?.handedTo?.appId !== appId) return;
    this.standby = undefined;
    void this.discard(s);
  }

  /** Kills the standby (worker shutdown); none is started after this. */
  async stop(): Promise<void> {
    this.stopped = true;
    const s = this.standby;
    this.standby = undefined;
    if (s) await this.discard(s);
  }

  /**
   * The confined standby, become `spec`'s launch: only the executor of the application its local
   * dirs were handed to, with those dirs. Its dir becomes the executor's (`spec.cwd`, made empty
   * by the runner: a rename over it); the launch it reads names the paths it sees (its dir and
   * local dirs where they were when it started).
   */
  private takeConfined(s: Standby, spec: LaunchSpec): Launched | undefined {
    const handed = s.confined?.handedTo;
    // Not handed over: another application's later executor, which has dirs of its own already.
    if (!handed) return undefined;
    this.standby = undefined;
    try {
      if (spec.env[EXECUTOR_DIRS_ENV] !== handed.dirs.join(delimiter))
        throw new Error(`the launch's local dirs are not the ones it brought`);
      if (s.gone || fstatSync(s.out).size > 0 || fstatSync(s.err).size > 0)
        throw new Error('it is gone or wrote output before its launch');
      writeSync(s.err, `${spec.header}\n${'='.repeat(40)}\n\n`);
      renameSync(s.dir, spec.cwd);
      madeLogs.record(join(spec.cwd, 'stdout'), s.out);
      madeLogs.record(join(spec.cwd, 'stderr'), s.err);
      s.stdin.end(confinedLaunchLine(spec, s.dir, s.confined?.localDirs ?? []));
    } catch (err) {
      log.warn(`Standby executor process ${s.pid} unusable (${(err as Error).message}); spawning`);
      void this.discard(s);
      return undefined;
    } finally {
      closeFds(s);
    }
    log.debug(`Executor launch served by confined standby process ${s.pid}`);
    return { pid: s.pid, marker: s.marker, exited: s.exited, sandboxed: true };
  }

  private qualifies(spec: Pick<LaunchSpec, 'argv' | 'env' | 'append'>): boolean {
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
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const localDirs: string[] = [];
    if (this.confined) {
      try {
        for (const root of this.confined.localDirRoots) {
          mkdirSync(root, { recursive: true });
          // Absolute: bwrap binds it.
          localDirs.push(resolve(mkdtempSync(join(root, `${STANDBY_LOCAL_DIR}${marker}.`))));
        }
      } catch (e) {
        for (const d of [dir, ...localDirs]) rmSync(d, { recursive: true, force: true });
        throw e;
      }
    }
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
    // Confined, it stands in `dir` (bound: a rename on the host does not move it); open, not in
    // `dir`, which take() removes: until the standby has read its launch and moved to the
    // executor's folder, it must stand in one that stays. A task thread still starting then asks
    // for the process's working directory, and a removed one ended the executor at once (ENOENT
    // from process.cwd(), exit 1), a race of a launch that takes a standby still loading.
    const [file, ...argv] = this.confined
      ? this.confined.sandbox.wrap([this.command[0], ...args], { cwd: dir, readWrite: localDirs })
      : [this.command[0], ...args];
    const child = spawnMarked(file as string, argv, {
      cwd: this.confined ? dir : join(this.workDir, '.prestart'),
      env: {},
      marker,
      stdin: 'pipe',
      out,
      err,
    });
    if (child.pid === undefined) {
      closeSync(out);
      closeSync(err);
      for (const d of [dir, ...localDirs]) rmSync(d, { recursive: true, force: true });
      throw new Error(`cannot spawn ${file}`);
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
      ...(this.confined ? { confined: { localDirs } } : {}),
    };
    void standby.exited.then(() => {
      standby.gone = true;
      if (this.standby === standby) {
        log.warn(`Standby executor process ${standby.pid} exited unused; see ${dir}/stderr`);
        this.standby = undefined;
        if (standby.confined && !standby.confined.handedTo) {
          for (const d of standby.confined.localDirs) rmSync(d, { recursive: true, force: true });
        }
      }
    });
    return standby;
  }

  private async discard(s: Standby): Promise<void> {
    closeFds(s);
    await killProcessTree(s.pid, s.marker, this.killTimeoutMs, s.gone, undefined, {
      sandboxed: s.confined !== undefined,
    });
    rmSync(s.dir, { recursive: true, force: true });
    // Local dirs handed over are the application's now: AppDirectories removes them.
    if (s.confined && !s.confined.handedTo) {
      for (const d of s.confined.localDirs) rmSync(d, { recursive: true, force: true });
    }
  }
}

/**
 * The launch a confined standby reads: `spec`, with the paths it sees — its dir where it was at
 * its start (`dir`), and its local dirs (`localDirs`) in place of the application's.
 */
export function confinedLaunchLine(
  spec: Pick<LaunchSpec, 'argv' | 'env'>,
  dir: string,
  localDirs: readonly string[],
): string {
  const env = { ...spec.env, [EXECUTOR_DIRS_ENV]: localDirs.join(delimiter) };
  return `${JSON.stringify({ argv: spec.argv, cwd: dir, env })}\n`;
}

/**
 * Whether the sandbox whose bwrap is `pid` runs its command: bwrap binds everything before it
 * executes it, so from then on a rename on the host changes nothing inside. Read from the process
 * tree (bwrap, the init of its PID namespace, the command); undefined reads as not yet.
 */
export function sandboxStarted(pid: number): boolean {
  let level = [pid];
  for (let depth = 0; depth < 3 && level.length > 0; depth++) {
    const next: number[] = [];
    for (const p of level) {
      let children: string;
      try {
        children = readFileSync(`/proc/${p}/task/${p}/children`, 'utf8');
      } catch {
        return false;
      }
      for (const c of children.split(' ').filter(Boolean).map(Number)) {
        let argv0: string;
        try {
          argv0 = readFileSync(`/proc/${c}/cmdline`, 'utf8').split('\0')[0] ?? '';
        } catch {
          continue;
        }
        if (basename(argv0) !== 'bwrap') return true;
        next.push(c);
      }
    }
    level = next;
  }
  return false;
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

/**
 * Removes what standbys of workers no longer running left in `dir` (a worker killed outright
 * cannot clean up): the entries whose name, by `owner`, starts with a pid that is not alive. Each
 * name carries its worker's pid (newMarker), so that workers sharing a work dir or a local dir
 * root (several instances on one host) never take each other's.
 */
function sweepLeftovers(dir: string, owner: RegExp): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(owner.exec(name)?.[1]);
    if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid || alive(pid)) continue;
    try {
      rmSync(join(dir, name), { recursive: true, force: true });
      log.info(
        `Removed ${join(dir, name)}, left by a standby executor of a worker that is gone (pid ${pid})`,
      );
    } catch (err) {
      log.warn(
        `Cannot remove ${join(dir, name)}, left by a worker that is gone: ${(err as Error).message}`,
      );
    }
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: alive, another user's.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
