import { mkdir } from 'node:fs/promises';
import { AppConf } from '../conf/app.js';
import { DeployConf } from '../conf/deploy.js';
import type { WickConf } from '../conf/WickConf.js';
import { WorkerConf } from '../conf/worker.js';
import { fetchFiles } from '../files/fetchFiles.js';
import { Heartbeat, RegisterWorker } from '../protocol/deploy.js';
import {
  FILE_SERVER_ENDPOINT,
  MASTER_ENDPOINT,
  WORKER_ENDPOINT,
  WORKER_SYSTEM,
} from '../protocol/endpoints.js';
import type { ShippedFile } from '../protocol/files.js';
import type { AnyMessageDef, WireMessage } from '../protocol/registry.js';
import type { ResourceAddresses } from '../protocol/resources.js';
import { APP_CREDENTIAL_ENV, deriveKey, formatCredential } from '../rpc/credentials.js';
import { RpcAddress, RpcEndpoint, type RpcSenderContext } from '../rpc/index.js';
import { TLS_FINGERPRINT_ENV } from '../rpc/tls/WireSecurity.js';
import { type Clock, systemClock, type TimerHandle } from '../util/clock.js';
import { distFile } from '../util/paths.js';
import { AppDirectories } from './AppDirectories.js';
import { Decommission } from './Decommission.js';
import type { RunnerHost } from './ExecutorRunner.js';
import { masterMessageProblem } from './fromMaster.js';
import { decommissionHandlers } from './handlers/decommission.js';
import { launchHandlers } from './handlers/launch.js';
import { logHandlers } from './handlers/logs.js';
import { masterHandlers } from './handlers/master.js';
import type { HandlerRegistry, On } from './handlers/on.js';
import { LogFollows } from './logs/LogFollows.js';
import type { RollingConf } from './logs/RollingFileAppender.js';
import { rollingConfOf } from './logs/rollingConf.js';
import { MasterConnection } from './MasterConnection.js';
import { WorkDirCleanup } from './messages.js';
import type { Launched, LaunchSpec } from './process/launch.js';
import { ExecutorPrestarter } from './process/prestart.js';
import { Runners } from './Runners.js';
import { CustomResources } from './resources/CustomResources.js';
import { StateChanges } from './StateChanges.js';
import { warmSandboxCompileCache } from './sandbox/compileCacheWarmup.js';
import type { Sandbox } from './sandbox/Sandbox.js';
import { WorkerResources } from './WorkerResources.js';
import { WorkDirCleaner } from './workDirCleanup.js';

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
  /** host:port of the worker's external shuffle service (wick.shuffle.service.enabled), if on. */
  shuffleServiceAddress?: string;
  /** What applications' processes run confined in (wick.executor.sandbox); none: open. */
  sandbox?: Sandbox;
  /** Its custom resources (wick.worker.resource.*), as discovered at start. */
  customResources?: ResourceAddresses;
}

/**
 * The Worker endpoint (Spark's Worker): registers with the masters, heartbeats, launches executors
 * and drivers, kills their whole process trees, and serves their logs. This is wiring: the state
 * lives in components that own it (the resources, the runners, the applications' dirs, the log
 * follows, the master connection, the work dir cleanup), and the handlers in handlers/, by concern.
 */
export class Worker extends RpcEndpoint implements RunnerHost {
  /** Alias of WORKER_ENDPOINT, for code that has not moved to protocol/endpoints.ts yet. */
  static readonly ENDPOINT_NAME = WORKER_ENDPOINT;
  static readonly SYSTEM_NAME = WORKER_SYSTEM;

  readonly conf: WickConf;
  readonly clock: Clock;
  readonly workDir: string;
  readonly workerId: string;
  readonly webUiPort: number;
  readonly webUiUrl: string;
  readonly killTimeoutMs: number;
  /** RunnerHost.logRolling: wick.executor.logs.rolling.*, read once. */
  readonly logRolling: RollingConf | undefined;
  readonly exit: (code: number, reason: string) => void;
  readonly shuffleServiceAddress: string | undefined;
  readonly sandbox: Sandbox | undefined;

  readonly resources: WorkerResources;
  /** Its custom resources' addresses, and which executor holds which (the master hands them out). */
  readonly customResources: CustomResources;
  readonly runners: Runners;
  readonly appDirectories: AppDirectories;
  readonly logFollows: LogFollows;
  readonly masterConnection: MasterConnection;
  readonly workDirCleaner: WorkDirCleaner;
  /** Whether it decommissions: then it launches nothing more, and exits once nothing runs. */
  readonly decommission: Decommission;
  /** A Wick executor process started ahead (wick.worker.executor.prestart), or none. */
  readonly prestart: ExecutorPrestarter | undefined;
  private prestartTimer: TimerHandle | undefined;
  /** `[node, wick.cjs]`: what executors of Wick applications run. */
  private readonly wickCommand: readonly [string, string];
  /** Stops the filling of the sandbox's code cache, while it runs (compileCacheWarmup.ts). */
  private stopCacheWarmup: (() => Promise<void>) | undefined;
  private readonly stateChanges = new StateChanges();

  /** Its configured masters, host:port: the only ones a MasterChanged may name. */
  private readonly masterAddresses: readonly string[];

  constructor(options: WorkerOptions) {
    super();
    this.masterAddresses = options.masterAddresses;
    this.conf = options.conf;
    this.clock = options.clock ?? systemClock;
    this.workDir = options.workDir;
    this.workerId = options.workerId;
    this.webUiPort = options.webUiPort;
    this.webUiUrl = options.webUiUrl;
    this.killTimeoutMs = this.conf.get(WorkerConf.killTimeout);
    this.logRolling = rollingConfOf(this.conf);
    this.exit = options.exit ?? ((code) => process.exit(code));
    this.shuffleServiceAddress = options.shuffleServiceAddress;
    this.sandbox = options.sandbox;
    const { changed } = this.stateChanges;
    this.resources = new WorkerResources(options.cores, options.memoryMB, changed);
    this.customResources = new CustomResources(options.customResources ?? {});
    this.runners = new Runners(
      {
        executors: this.conf.get(WorkerConf.retainedExecutors),
        drivers: this.conf.get(WorkerConf.retainedDrivers),
      },
      changed,
    );
    this.logFollows = new LogFollows(changed);
    this.appDirectories = new AppDirectories(options.localDirs, (appId) =>
      this.runners.hasExecutorsOf(appId),
    );
    const stopped = () => this.rpcEnv.isStopped;
    const post = (message: WireMessage) => this.self.send(message);
    this.masterConnection = new MasterConnection({
      masterAddresses: options.masterAddresses,
      conf: this.conf,
      clock: this.clock,
      random: options.random ?? Math.random,
      heartbeatMs: Math.max(1, Math.floor(this.conf.get(DeployConf.workerTimeout) / 4)),
      exit: this.exit,
      changed,
      link: {
        connect: (address) =>
          this.rpcEnv.setupEndpointRef(RpcAddress.parse(address), MASTER_ENDPOINT),
        registration: (address) => this.registerWorkerMessage(address),
        heartbeat: () => Heartbeat({ workerId: this.workerId, worker: this.self.toData() }),
        post,
        stopped,
      },
    });
    this.workDirCleaner = new WorkDirCleaner({
      workDir: this.workDir,
      localDirs: options.localDirs,
      conf: this.conf,
      clock: this.clock,
      inUse: () => [
        ...this.runners.runningExecutors().map((r) => r.appId),
        ...this.appDirectories.applications(),
        ...this.runners.runningDriverIds(),
      ],
      post,
      stopped,
    });
    // A standby writes its output straight to files, which nothing could roll. In a confining
    // worker it runs confined from its start, with dirs of its own that become its executor's and
    // its application's (prestart.ts): it serves an application's first executor here.
    this.wickCommand = [process.execPath, options.wickCli ?? distFile('wick.cjs')];
    this.prestart =
      this.conf.get(WorkerConf.executorPrestart) && !this.logRolling
        ? new ExecutorPrestarter(
            this.workDir,
            this.wickCommand,
            this.killTimeoutMs,
            this.resources.cores,
            this.conf.get(AppConf.executorMemory),
            this.sandbox ? { sandbox: this.sandbox, localDirRoots: options.localDirs } : undefined,
          )
        : undefined;

    this.decommission = new Decommission(
      this.workerId,
      this.conf.get(WorkerConf.decommissionForceKillTimeout),
      {
        clock: this.clock,
        running: () =>
          this.runners.runningExecutors().length + this.runners.runningDrivers().length,
        killAll: () => this.runners.killAll(),
        tellMaster: (message) => this.masterConnection.send(message),
        changed,
        exit: (code, reason) => this.exit(code, reason),
      },
    );
    this.stateChanges.listen(() => this.decommission.checkIdle());
    const on: On = (def, handler) => this.on(def, handler);
    const registry: HandlerRegistry = { on };
    masterHandlers(this, registry);
    launchHandlers(this, registry);
    logHandlers(this, registry);
    decommissionHandlers(this, registry);
    this.on(WorkDirCleanup, () => {
      void this.workDirCleaner.run();
    });
  }

  /** Whatever the master sends is checked against the connection it came over (fromMaster.ts). */
  override senderProblem(
    def: AnyMessageDef,
    message: WireMessage,
    sender: RpcSenderContext,
  ): string | undefined {
    if (!def.from.includes('master')) return undefined;
    return masterMessageProblem(def, message, sender, this.masterConnection, this.masterAddresses);
  }

  /**
   * RunnerHost.credentialEnv: the key of one application (or submission), never the secret; and
   * the masters' certificates this worker pins, which a cluster-mode driver pins in turn.
   */
  credentialEnv(kind: 'app' | 'submission', id: string): Record<string, string> {
    const pins = this.rpcEnv.security.pins;
    const tls: Record<string, string> =
      pins.length > 0 ? { [TLS_FINGERPRINT_ENV]: pins.join(',') } : {};
    const secret = this.rpcEnv.clusterSecret;
    if (secret === undefined) return tls;
    return {
      ...tls,
      [APP_CREDENTIAL_ENV]: formatCredential({ kind, id, key: deriveKey(secret, kind, id) }),
    };
  }

  /** RunnerHost.confine: the launch wrapped in this worker's sandbox, if it has one. */
  confine(argv: readonly string[], own: { cwd: string; readWrite: readonly string[] }) {
    return this.sandbox?.wrap(argv, own);
  }

  get cores(): number {
    return this.resources.cores;
  }

  /** MiB. */
  get memory(): number {
    return this.resources.memory;
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
    this.masterConnection.register();
    if (this.sandbox?.compileCache !== undefined) {
      // A confined standby starts once the cache it loads from is there.
      this.stopCacheWarmup = warmSandboxCompileCache(
        this.sandbox,
        this.wickCommand,
        this.killTimeoutMs,
        () => this.prestart?.fill(),
      );
    } else {
      this.prestart?.fill();
    }
  }

  override async onStop(): Promise<void> {
    this.masterConnection.stop();
    this.workDirCleaner.stop();
    this.prestartTimer?.cancel();
    this.logFollows.stopAll();
    await Promise.all([this.runners.killAll(), this.prestart?.stop(), this.stopCacheWarmup?.()]);
    await this.appDirectories.removeAll();
  }

  override onDisconnected(address: string): void {
    this.logFollows.dropAddress(address);
    this.masterConnection.disconnected(address);
  }

  /**
   * Calls `fn` after anything the worker's page shows may have changed (a launch, a kill, a runner's
   * new state, a new master); the web UI pushes it to the pages. Returns a function that stops it.
   */
  onStateChange(fn: () => void): () => void {
    return this.stateChanges.listen(fn);
  }

  private registerWorkerMessage(masterAddress: string): WireMessage {
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
      ...(this.customResources.isEmpty ? {} : { resources: this.customResources.all }),
    });
  }

  /**
   * Fetches files from the master this worker follows (the one that launched the driver, or the
   * one it follows since a failover: every master was given the files).
   */
  readonly fetchFromMaster = async (files: readonly ShippedFile[], dest: string) => {
    const url = this.masterConnection.activeMasterUrl;
    if (!url) throw new Error('This worker follows no master to fetch the application from');
    const server = await this.rpcEnv.setupEndpointRef(
      url.replace(/^wick:\/\//, ''),
      FILE_SERVER_ENDPOINT,
    );
    return fetchFiles(server, files, dest);
  };

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
        if (this.resources.coresFree > 0) this.prestart?.fill();
      }, PRESTART_REFILL_MS);
    }
    return launched;
  }
}
