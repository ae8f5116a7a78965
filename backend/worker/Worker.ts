import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { DeployConf } from '../conf/deploy.js';
import type { WickConf } from '../conf/WickConf.js';
import type { ExecutorDescription } from '../protocol/common.js';
import {
  DriverStateChanged,
  ExecutorStateChanged,
  Heartbeat,
  RegisterWorker,
  WorkerLatestState,
  WorkerSchedulerStateResponse,
} from '../protocol/deploy.js';
import { WORKER_ENDPOINT, WORKER_SYSTEM } from '../protocol/endpoints.js';
import type { WireMessage } from '../protocol/registry.js';
import {
  type RpcCallContext,
  RpcEndpoint,
  type RpcEndpointRef,
  type RpcSenderContext,
  unsupported,
} from '../rpc/index.js';
import { type Clock, systemClock, type TimerHandle } from '../util/clock.js';
import { distFile } from '../util/paths.js';
import { WorkerConf } from './config.js';
import type { DriverRunner } from './DriverRunner.js';
import type { ExecutorRunner, RunnerHost } from './ExecutorRunner.js';
import * as launchHandlers from './handlers/launch.js';
import * as logHandlers from './handlers/logs.js';
import * as masterHandlers from './handlers/master.js';
import type { Launched, LaunchSpec } from './process/launch.js';
import { ExecutorPrestarter } from './process/prestart.js';
import { cleanupWorkDir } from './workDirCleanup.js';

/** After a launch used the standby, how long until the next one starts (if a core is free then). */
const PRESTART_REFILL_MS = 3000;

export interface WorkerOptions {
  conf: WickConf;
  /** Master addresses (host:port), one or several. */
  masterAddresses: string[];
  cores: number;
  memoryMB: number;
  workDir: string;
  webUiPort: number;
  webUiUrl: string;
  workerId: string;
  /** Roots for applications' local dirs (wick.local.dir). */
  localDirs: string[];
  clock?: Clock;
  random?: () => number;
  /** Called when the worker must end the process (Spark's System.exit). */
  exit?: (code: number, reason: string) => void;
  /** The CLI that standby executors run (default dist/wick.cjs). */
  wickCli?: string;
}

/**
 * The Worker endpoint (Spark's Worker): registers with the masters, heartbeats, launches executors
 * and drivers, kills their whole process trees, and serves their logs. Handlers live in handlers/
 * by concern; shared state and the operations on it are here.
 */
export class Worker extends RpcEndpoint implements RunnerHost {
  /** Alias of WORKER_ENDPOINT, for code that has not moved to protocol/endpoints.ts yet. */
  static readonly ENDPOINT_NAME = WORKER_ENDPOINT;
  static readonly SYSTEM_NAME = WORKER_SYSTEM;

  readonly conf: WickConf;
  readonly clock: Clock;
  readonly random: () => number;
  readonly masterAddresses: string[];
  readonly cores: number;
  readonly memory: number;
  readonly workDir: string;
  readonly workerId: string;
  readonly webUiPort: number;
  readonly webUiUrl: string;
  readonly localDirs: string[];
  readonly killTimeoutMs: number;
  readonly heartbeatMs: number;
  /** A Wick executor process started ahead (wick.worker.executor.prestart), or none. */
  readonly prestart: ExecutorPrestarter | undefined;
  private prestartTimer: TimerHandle | undefined;
  readonly exit: (code: number, reason: string) => void;

  registered = false;
  connected = false;
  master: RpcEndpointRef | undefined;
  /** host:port of the master this worker follows. */
  masterAddress: string | undefined;
  activeMasterUrl: string | undefined;
  activeMasterWebUiUrl: string | undefined;
  connectionAttemptCount = 0;
  registrationTimer: TimerHandle | undefined;
  heartbeatTimer: TimerHandle | undefined;
  cleanupTimer: TimerHandle | undefined;

  readonly executors = new Map<string, ExecutorRunner>();
  readonly finishedExecutors = new Map<string, ExecutorRunner>();
  readonly drivers = new Map<string, DriverRunner>();
  readonly finishedDrivers = new Map<string, DriverRunner>();
  /** Applications' local dirs made here, until they are deleted. */
  readonly appDirectories = new Map<string, string[]>();
  readonly finishedApps = new Set<string>();
  coresUsed = 0;
  memoryUsed = 0;
  private readonly stateListeners = new Set<() => void>();

  constructor(options: WorkerOptions) {
    super();
    this.conf = options.conf;
    this.clock = options.clock ?? systemClock;
    this.random = options.random ?? Math.random;
    this.masterAddresses = options.masterAddresses;
    this.cores = options.cores;
    this.memory = options.memoryMB;
    this.workDir = options.workDir;
    this.workerId = options.workerId;
    this.webUiPort = options.webUiPort;
    this.webUiUrl = options.webUiUrl;
    this.localDirs = options.localDirs;
    this.killTimeoutMs = this.conf.get(WorkerConf.killTimeout);
    this.heartbeatMs = Math.max(1, Math.floor(this.conf.get(DeployConf.workerTimeout) / 4));
    this.exit = options.exit ?? ((code) => process.exit(code));
    this.prestart = this.conf.get(WorkerConf.executorPrestart)
      ? new ExecutorPrestarter(
          this.workDir,
          [process.execPath, options.wickCli ?? distFile('wick.cjs')],
          this.killTimeoutMs,
          this.cores,
        )
      : undefined;
  }

  get host(): string {
    return (this.rpcEnv.rpcAddress?.host ?? '127.0.0.1') as string;
  }

  get workerUrl(): string {
    return this.self.toString();
  }

  override async onStart(): Promise<void> {
    await mkdir(this.workDir, { recursive: true });
    this.log.info(
      `Starting Wick worker ${this.rpcEnv.address} with ${this.cores} cores, ${this.memory} MiB RAM; work dir ${this.workDir}`,
    );
    masterHandlers.registerWithMaster(this);
    this.prestart?.fill();
  }

  override async onStop(): Promise<void> {
    this.registrationTimer?.cancel();
    this.heartbeatTimer?.cancel();
    this.cleanupTimer?.cancel();
    this.prestartTimer?.cancel();
    logHandlers.stopAll(this);
    await Promise.all([this.killAll(), this.prestart?.stop()]);
    await this.removeAppLocalDirs();
  }

  /**
   * Deletes what is left of the applications' local dirs, at shutdown: its executors here are
   * dead, and a worker started later does not know of the dirs (Spark leaves them to its
   * executors' shutdown hooks). Those of a finished application may still be being deleted
   * (maybeCleanupApplication), and the process exits once this returns: an embedded cluster
   * stopped right after its last application, as `wick submit --master local` does, left them in
   * the temp folder.
   */
  private async removeAppLocalDirs(): Promise<void> {
    const dirs = [...this.appDirectories.values()].flat();
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
    this.appDirectories.clear();
  }

  /** Kills every executor and driver tree (worker shutdown). */
  async killAll(): Promise<void> {
    await Promise.all([
      ...[...this.executors.values()].map((r) => r.kill()),
      ...[...this.drivers.values()].map((r) => r.kill()),
    ]);
  }

  override async receive(message: WireMessage, sender: RpcSenderContext): Promise<void> {
    if (await masterHandlers.receive(this, message)) {
      if (message.type !== 'SendHeartbeat') this.stateChanged();
      return;
    }
    if (await launchHandlers.receive(this, message)) {
      this.stateChanged();
      return;
    }
    if (logHandlers.receive(this, message)) return;
    if (message.type === 'WorkDirCleanup') {
      void cleanupWorkDir(this);
      return;
    }
    throw unsupported(message, sender);
  }

  override async receiveAndReply(message: WireMessage, ctx: RpcCallContext): Promise<unknown> {
    const reply =
      (await logHandlers.reply(this, message, ctx)) ?? launchHandlers.reply(this, message);
    if (reply === undefined) throw unsupported(message, ctx);
    return reply;
  }

  override onDisconnected(address: string): void {
    logHandlers.dropAddress(this, address);
    if (this.master && this.master.address === address) {
      this.log.error(`Connection to master ${address} failed! Waiting for master to reconnect...`);
      this.connected = false;
      masterHandlers.registerWithMaster(this);
    }
  }

  /**
   * Calls `fn` after anything the worker's page shows may have changed (a launch, a kill, a runner's
   * new state, a new master); the web UI pushes it to the pages. Returns a function that stops it.
   */
  onStateChange(fn: () => void): () => void {
    this.stateListeners.add(fn);
    return () => this.stateListeners.delete(fn);
  }

  private stateChanged(): void {
    for (const fn of [...this.stateListeners]) fn();
  }

  sendToMaster(message: WireMessage): void {
    // During shutdown, runners killed by onStop still report how they ended; the env is stopping
    // and would throw, and there is no master connection left to tell anyway.
    if (this.rpcEnv.isStopped) return;
    if (!this.master) {
      this.log.warn(
        `Dropping ${message.type} because the connection to master has not yet been established`,
      );
      return;
    }
    this.master.send(message);
  }

  registerWorkerMessage(masterAddress: string): WireMessage {
    const addr = this.rpcEnv.rpcAddress;
    return RegisterWorker({
      id: this.workerId,
      host: addr?.host ?? '127.0.0.1',
      port: addr?.port ?? 0,
      worker: this.self.toData(),
      cores: this.cores,
      memory: this.memory,
      workerWebUiUrl: this.webUiUrl,
      masterAddress,
    });
  }

  heartbeat(): WireMessage {
    return Heartbeat({ workerId: this.workerId, worker: this.self.toData() });
  }

  executorDescriptions(): ExecutorDescription[] {
    return [...this.executors.values()].map((r) => ({
      appId: r.appId,
      execId: r.execId,
      cores: r.cores,
      state: r.state,
    }));
  }

  latestState(kind: 'latest' | 'scheduler'): WireMessage {
    const fields = {
      id: this.workerId,
      executors: this.executorDescriptions(),
      driverIds: [...this.drivers.keys()],
    };
    return kind === 'latest' ? WorkerLatestState(fields) : WorkerSchedulerStateResponse(fields);
  }

  /** A runner changed state: tell the master, and free the resources of a finished one. */
  executorStateChanged(runner: ExecutorRunner): void {
    this.sendToMaster(
      ExecutorStateChanged({
        appId: runner.appId,
        execId: runner.execId,
        state: runner.state,
        message: runner.message,
        exitStatus: runner.exitCode,
      }),
    );
    this.stateChanged();
    if (!runner.isFinished) return;
    if (this.executors.delete(runner.fullId)) {
      this.coresUsed -= runner.cores;
      this.memoryUsed -= runner.memory;
      retain(
        this.finishedExecutors,
        runner.fullId,
        runner,
        this.conf.get(WorkerConf.retainedExecutors),
      );
    }
    // After the delete: a follower asks whether its process is done, so it ends now, not at its re-check.
    logHandlers.sourceChanged(this);
    void this.maybeCleanupApplication(runner.appId);
    this.prestart?.fill();
  }

  /**
   * The standby executor process turned into `spec`'s launch, if it qualifies. The next standby
   * starts a little later if a core is still free here (another executor could come), else when
   * an executor or a driver ends: its start-up (about 0.17 s of CPU) takes no CPU from the
   * executor that just started, nor from tasks that keep every core busy (in bench/pi, the two
   * workers' standbys started 3 s into a job made that job 15–20% slower).
   */
  takeStandby(spec: LaunchSpec): Launched | undefined {
    const launched = this.prestart?.take(spec);
    if (launched) {
      this.prestartTimer?.cancel();
      this.prestartTimer = this.clock.setTimeout(() => {
        if (this.coresUsed < this.cores) this.prestart?.fill();
      }, PRESTART_REFILL_MS);
    }
    return launched;
  }

  driverFinished(runner: DriverRunner): void {
    this.sendToMaster(
      DriverStateChanged({
        driverId: runner.driverId,
        state: runner.state,
        exception: runner.exception,
      }),
    );
    if (this.drivers.delete(runner.driverId)) {
      this.coresUsed -= runner.desc.cores;
      this.memoryUsed -= runner.desc.mem;
      this.prestart?.fill();
      retain(
        this.finishedDrivers,
        runner.driverId,
        runner,
        this.conf.get(WorkerConf.retainedDrivers),
      );
    }
    logHandlers.sourceChanged(this);
    this.stateChanged();
  }

  /** The local dirs of an application, created on its first executor here. */
  async appLocalDirs(appId: string): Promise<string[]> {
    let dirs = this.appDirectories.get(appId);
    if (!dirs) {
      dirs = await Promise.all(
        this.localDirs.map(async (root) => {
          await mkdir(root, { recursive: true });
          return mkdtemp(join(root, `wick-executor-${appId}-`));
        }),
      );
      this.appDirectories.set(appId, dirs);
    }
    return dirs;
  }

  /** Deletes a finished application's local dirs once none of its executors runs here. */
  async maybeCleanupApplication(appId: string): Promise<void> {
    if (!this.finishedApps.has(appId)) return;
    for (const r of this.executors.values()) if (r.appId === appId) return;
    // Its dirs stay listed until they are gone, for a shutdown meanwhile (removeAppLocalDirs);
    // leaving finishedApps keeps this from running twice.
    const dirs = this.appDirectories.get(appId) ?? [];
    this.finishedApps.delete(appId);
    for (const dir of dirs) {
      this.log.info(`Cleaning up local directories for application ${appId}: ${dir}`);
      await rm(dir, { recursive: true, force: true });
    }
    this.appDirectories.delete(appId);
  }
}

function retain<T>(map: Map<string, T>, key: string, value: T, max: number): void {
  map.set(key, value);
  while (map.size > max) {
    const first = map.keys().next().value as string;
    map.delete(first);
  }
}
