/**
 * Running Wick applications for real in tests: one cluster shared by a test file (found, with
 * everything it and its apps start, by the WICK_TEST_MARK in their environment),
 * applications written as small files in a temp folder, a subscriber that follows the master's
 * pushed state (so a test waits for a state rather than sleeping or polling the CLI), and checks
 * that an application left no process behind.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { MasterStateMirror } from '../../backend/client/MasterStateMirror.js';
import { WickConf } from '../../backend/conf/WickConf.js';
import type { MessageOf } from '../../backend/protocol/registry.js';
import type { MasterStateResponse } from '../../backend/protocol/state.js';
import { RpcEnv } from '../../backend/rpc/index.js';
import {
  assertBuilt,
  killMarked,
  type MarkedProcess,
  markedProcesses,
  type WickProcess,
  waitUntilGone,
} from './cli.js';
import {
  type Daemon,
  type MasterProcess,
  startMaster,
  startWorker,
  type WorkerProcess,
} from './cluster.js';
import { testProtocol } from './protocol.js';

export type MasterState = MessageOf<typeof MasterStateResponse>;

/** Follows a master's state as it pushes it. */
export class MasterWatch {
  private constructor(
    private readonly env: RpcEnv,
    readonly mirror: MasterStateMirror,
  ) {}

  /** `conf`: the watch's own settings, e.g. `wick.authenticate=false` for a cluster that runs open. */
  static async connect(masterUrl: string, conf?: Record<string, string>): Promise<MasterWatch> {
    const env = await RpcEnv.create({
      protocol: testProtocol,
      name: 'testWatch',
      clientMode: true,
      conf: conf ? new WickConf(conf) : undefined,
    });
    const master = await env.setupEndpointRef(masterUrl.replace(/^wick:\/\//, ''), 'Master');
    const mirror = new MasterStateMirror();
    env.setupEndpoint('StateMirror', mirror);
    await mirror.subscribe(master);
    return new MasterWatch(env, mirror);
  }

  /** The first state for which `predicate` holds. No deadline: the test's timeout is the limit. */
  waitFor(predicate: (s: MasterState) => boolean): Promise<MasterState> {
    return this.mirror.waitFor(predicate);
  }

  app(s: MasterState, id: string) {
    return [...s.activeApps, ...s.completedApps].find((a) => a.id === id);
  }

  driver(s: MasterState, id: string) {
    return [...s.activeDrivers, ...s.completedDrivers].find((d) => d.id === id);
  }

  stop(): Promise<void> {
    return this.env.stop();
  }
}

export interface SharedCluster {
  url: string;
  mark: string;
  workDir: string;
  master: MasterProcess;
  workers: WorkerProcess[];
  watch: MasterWatch;
  /** Processes of the run that are not the cluster's daemons (drivers, executors), alive now. */
  others(): MarkedProcess[];
  /** Waits until no process but the daemons is left; fails naming the survivors otherwise. */
  assertOnlyClusterLeft(): Promise<void>;
  /** What the executors of an application wrote on `stream`, all joined. */
  executorOutput(appId: string, stream?: 'stdout' | 'stderr'): string;
  /** Stops the cluster and checks that nothing the run started is left. */
  stop(): Promise<void>;
}

/**
 * A master and N workers (1 core each, or `cores`) on free ports, sharing one work dir, every
 * process marked.
 * They are `wick master` / `wick worker` with --exit-with-parent, so they die with the test process
 * even if it is killed. Call stop() in the file's after().
 */
export async function startSharedCluster(
  opts: {
    workers?: number;
    cores?: number;
    memory?: string;
    /** Settings of every daemon, and of the test's own watch on the master. */
    conf?: Record<string, string>;
    /** More settings for worker `i` (0-based). */
    workerConf?: (i: number) => Record<string, string>;
    /** More environment for every daemon (e.g. WICK_AUTH_SECRET). */
    env?: NodeJS.ProcessEnv;
    /** Settings of the test's watch on the master, when they differ from `conf`. */
    watchConf?: Record<string, string>;
  } = {},
): Promise<SharedCluster> {
  assertBuilt();
  const mark = randomUUID();
  const workDir = mkdtempSync(join(tmpdir(), 'wick-test-app-'));
  const env = { ...opts.env, WICK_TEST_MARK: mark };
  const daemons: Daemon[] = [];
  let watch: MasterWatch | undefined;
  const stop = async () => {
    await watch?.stop();
    await Promise.all(daemons.map((d) => d.stop()));
    const left = await waitUntilGone(markedProcesses(mark).map((p) => p.pid));
    await killMarked(mark);
    rmSync(workDir, { recursive: true, force: true });
    assert.deepEqual(left, [], 'processes left after the cluster stopped');
  };
  try {
    const master = await startMaster(undefined, { conf: opts.conf, env });
    daemons.push(master);
    const workers: WorkerProcess[] = [];
    for (let i = 0; i < (opts.workers ?? 2); i++) {
      const w = await startWorker(undefined, master.url, {
        cores: opts.cores ?? 1,
        memory: opts.memory ?? '1g',
        workDir,
        conf: { ...opts.conf, ...opts.workerConf?.(i) },
        env,
      });
      daemons.push(w);
      workers.push(w);
    }
    watch = await MasterWatch.connect(master.url, opts.watchConf ?? opts.conf);
    await watch.waitFor(
      (s) => s.workers.filter((w) => w.state === 'ALIVE').length === workers.length,
    );
    const daemonPids = new Set(daemons.map((d) => d.pid));
    // A worker's standby executor process (wick.worker.executor.prestart) is the worker's own
    // while it waits. A confined one's bwrap keeps the standby's command line after its launch
    // (only Node's title changes): it is the worker's own only while a process of its sandbox
    // (its marker) still waits.
    const others = () => {
      const all = markedProcesses(mark).filter((p) => !daemonPids.has(p.pid));
      const standby = (p: { cmdline: string }) => / executor-standby( |$)/.test(p.cmdline);
      const waiting = new Set(
        all
          .filter((p) => standby(p) && !/^\S*bwrap /.test(p.cmdline))
          .map((p) => processMarker(p.pid)),
      );
      return all.filter((p) => !(standby(p) && waiting.has(processMarker(p.pid))));
    };
    return {
      url: master.url,
      mark,
      workDir,
      master,
      workers,
      watch,
      others,
      async assertOnlyClusterLeft() {
        const left = await waitUntilGone(others().map((p) => p.pid));
        assert.deepEqual(
          others().filter((p) => left.includes(p.pid)),
          [],
          'processes of the application left running',
        );
      },
      executorOutput(appId, stream = 'stdout') {
        const dir = join(workDir, appId);
        if (!existsSync(dir)) return '';
        return readdirSync(dir)
          .map((exec) => join(dir, exec, stream))
          .filter((p) => existsSync(p))
          .map((p) => readFileSync(p, 'utf8'))
          .join('\n');
      },
      stop,
    };
  } catch (err) {
    await stop().catch(() => {});
    throw err;
  }
}

/** Kills, when the test ends, whatever the `wick` processes it started still run (after a failure). */
export function killWhenDone(t: TestContext, ...ps: WickProcess[]): void {
  t.after(async () => {
    for (const p of ps)
      if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    await Promise.all(ps.map((p) => p.exited));
  });
}

/** A folder for a test file's applications; remove() it in after(). */
export class AppDir {
  /** Under the run's shared folder, which confined executors see read-only (scripts/test.mjs). */
  readonly path = mkdtempSync(
    join(process.env.WICK_TEST_SHARED_DIR ?? tmpdir(), 'wick-test-apps-'),
  );

  /** Writes `source` as `name` and returns its path. */
  write(name: string, source: string): string {
    const p = join(this.path, name);
    writeFileSync(p, source);
    return p;
  }

  remove(): void {
    rmSync(this.path, { recursive: true, force: true });
  }
}

/** The application id a driver logged ("Connected to Wick cluster with app ID app-…"). */
export function appIdIn(driverOutput: string): string | undefined {
  return /Connected to Wick cluster with app ID (app-\S+)/.exec(driverOutput)?.[1];
}

/**
 * Resolves with `what()` once it is defined, looking every 20 ms (at a child's output or files).
 * No deadline of its own; it gives up when `signal` (the test's) aborts.
 */
export async function eventually<T>(signal: AbortSignal, what: () => T | undefined): Promise<T> {
  for (;;) {
    const v = what();
    if (v !== undefined) return v;
    if (signal.aborted) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Waits until `n` executors have registered with a WickContext's driver (60 s at most). */
export function executorsRegistered(wc: unknown, n: number): Promise<true> {
  const driver = (wc as { driver: { executors: Map<string, unknown> } }).driver;
  return eventually(AbortSignal.timeout(60_000), () =>
    driver.executors.size >= n ? true : undefined,
  );
}

/** The marker a worker gave the process's launch (WICK_PROCESS_MARKER), if it can be read. */
export function processMarker(pid: number): string | undefined {
  try {
    const env = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
    return env
      .find((e) => e.startsWith('WICK_PROCESS_MARKER='))
      ?.slice('WICK_PROCESS_MARKER='.length);
  } catch {
    return undefined;
  }
}
