import type { WickConf } from '../conf/WickConf.js';
import {
  ApplicationRemoved,
  ExecutorAdded,
  ExecutorUpdated,
  WorkerRemoved,
} from '../protocol/app.js';
import type { ApplicationState, DriverState, RecoveryState } from '../protocol/common.js';
import {
  ApplicationFinished,
  type Heartbeat,
  KillExecutor,
  LaunchDriver,
  LaunchExecutor,
} from '../protocol/deploy.js';
import type { MessageOf, WireMessage } from '../protocol/registry.js';
import { type MasterEntry, MasterStateResponse } from '../protocol/state.js';
import {
  type RpcCallContext,
  RpcEndpoint,
  type RpcSenderContext,
  unsupported,
} from '../rpc/index.js';
import type { Clock, TimerHandle } from '../util/clock.js';
import { systemClock } from '../util/clock.js';
import { ApplicationInfo } from './ApplicationInfo.js';
import { MasterConf } from './config.js';
import type { DriverInfo } from './DriverInfo.js';
import type { ExecutorDesc } from './ExecutorDesc.js';
import * as appHandlers from './handlers/apps.js';
import * as driverHandlers from './handlers/drivers.js';
import * as stateHandlers from './handlers/state.js';
import * as workerHandlers from './handlers/workers.js';
import { appId as newAppId } from './ids.js';
import {
  type LeaderElectable,
  type LeaderElectionAgent,
  type LeaderElectionAgentFactory,
  monarchyLeaderAgent,
} from './leader/LeaderElectionAgent.js';
import type { PersistenceEngine } from './persistence/PersistenceEngine.js';
import { BlackHolePersistenceEngine } from './persistence/PersistenceEngine.js';
import { completeRecovery, electedLeader, stepDown } from './recovery.js';
import { StateBroadcaster } from './StateBroadcaster.js';
import { schedule, waitingReason } from './scheduling.js';
import type { WorkerInfo } from './WorkerInfo.js';

export interface MasterOptions {
  conf: WickConf;
  webUiPort: number;
  /** The web UI's URL as workers and users should open it. */
  webUiUrl: string;
  persistence?: PersistenceEngine;
  /** Default: this master leads at once (no standby masters). */
  leaderElection?: LeaderElectionAgentFactory;
  clock?: Clock;
  random?: () => number;
}

/** A message the Master sends itself from a timer; never on the wire. */
export type MasterSelfMessage =
  | { type: 'CheckForWorkerTimeOut' }
  | { type: 'CompleteRecovery' }
  | { type: 'ElectedLeader' }
  | { type: 'RevokedLeadership' };

/**
 * The Master endpoint (Spark's Master). It keeps the cluster's state, schedules drivers and
 * executors on workers, and pushes every change to subscribers. Handlers live in handlers/ by
 * concern; the operations they share (register, remove, launch, schedule) are here.
 */
export class Master extends RpcEndpoint implements LeaderElectable {
  static readonly ENDPOINT_NAME = 'Master';
  static readonly SYSTEM_NAME = 'wickMaster';

  state: RecoveryState = 'STANDBY';
  /** Every known worker, DEAD ones too until culled. */
  readonly workers = new Map<string, WorkerInfo>();
  /** Registered (not DEAD) workers by id and by their RpcEnv address. */
  readonly idToWorker = new Map<string, WorkerInfo>();
  readonly addressToWorker = new Map<string, WorkerInfo>();
  readonly idToApp = new Map<string, ApplicationInfo>();
  readonly addressToApp = new Map<string, ApplicationInfo>();
  /** Active applications in registration order: the FIFO the scheduler serves. */
  readonly waitingApps: ApplicationInfo[] = [];
  readonly completedApps: ApplicationInfo[] = [];
  readonly drivers = new Map<string, DriverInfo>();
  readonly waitingDrivers: DriverInfo[] = [];
  readonly completedDrivers: DriverInfo[] = [];
  readonly broadcaster = new StateBroadcaster();
  readonly conf: WickConf;
  readonly clock: Clock;
  readonly random: () => number;
  readonly persistence: PersistenceEngine;
  readonly webUiPort: number;
  readonly webUiUrl: string;
  readonly workerTimeoutMs: number;
  nextAppNumber = 0;
  nextDriverNumber = 0;
  recoveryTimer: TimerHandle | undefined;
  private timeoutTimer: TimerHandle | undefined;
  private readonly leaderElection: LeaderElectionAgentFactory;
  private leaderAgent: LeaderElectionAgent | undefined;
  /** The URLs of every master in the election, the leader first; unknown with a single master. */
  private masterUrls: string[] | undefined;

  constructor(options: MasterOptions) {
    super();
    this.conf = options.conf;
    this.clock = options.clock ?? systemClock;
    this.random = options.random ?? Math.random;
    this.persistence = options.persistence ?? new BlackHolePersistenceEngine();
    this.webUiPort = options.webUiPort;
    this.webUiUrl = options.webUiUrl;
    this.workerTimeoutMs = this.conf.get(MasterConf.workerTimeout);
    this.leaderElection = options.leaderElection ?? monarchyLeaderAgent;
  }

  get masterUrl(): string {
    return `wick://${this.rpcEnv.address}`;
  }

  get address(): string {
    return this.rpcEnv.address;
  }

  override async onStart(): Promise<void> {
    this.log.info(`Starting Wick master at ${this.masterUrl}`);
    this.log.info(`Master web UI at ${this.webUiUrl}`);
    this.scheduleTimeoutCheck();
    this.leaderAgent = this.leaderElection(this);
  }

  electedLeader(): void {
    this.self.send({ type: 'ElectedLeader' });
  }

  revokedLeadership(): void {
    this.self.send({ type: 'RevokedLeadership' });
  }

  mastersChanged(urls: string[]): void {
    this.masterUrls = urls;
    this.broadcaster.mastersChanged(this.masters() ?? []);
  }

  /**
   * Every master and its state: this one's own state; a leader knows the others are STANDBY; a
   * standby takes the first (lowest latch) as the leader, ALIVE.
   */
  masters(): MasterEntry[] | undefined {
    const urls = this.masterUrls;
    if (!urls) return undefined;
    const leading = this.state !== 'STANDBY';
    return urls.map((url, i) => ({
      url,
      status: url === this.masterUrl ? this.state : !leading && i === 0 ? 'ALIVE' : 'STANDBY',
    }));
  }

  override async onStop(): Promise<void> {
    this.timeoutTimer?.cancel();
    this.recoveryTimer?.cancel();
    await this.leaderAgent?.stop();
    this.broadcaster.flush();
    await this.persistence.close();
  }

  override receive(message: WireMessage, sender: RpcSenderContext): void | Promise<void> {
    // Heartbeats are nearly all a master receives (one per worker every timeout/4), so they are
    // handled synchronously: no promise per heartbeat, and the inbox need not await one.
    if (message.type === 'Heartbeat') {
      workerHandlers.heartbeat(this, message as MessageOf<typeof Heartbeat>);
      return;
    }
    return this.receiveOther(message, sender);
  }

  private async receiveOther(message: WireMessage, sender: RpcSenderContext): Promise<void> {
    if (message.type === 'ElectedLeader' && sender.senderAddress === this.address) {
      await electedLeader(this);
      return;
    }
    if (message.type === 'RevokedLeadership' && sender.senderAddress === this.address) {
      this.log.error('Leadership has been revoked -- stepping down to STANDBY.');
      stepDown(this);
      this.onLeadershipRevoked();
      return;
    }
    if (await workerHandlers.receive(this, message)) return;
    if (await appHandlers.receive(this, message)) return;
    if (await driverHandlers.receive(this, message)) return;
    if (stateHandlers.receive(this, message)) return;
    throw unsupported(message, sender);
  }

  override receiveAndReply(message: WireMessage, ctx: RpcCallContext): unknown {
    // State queries (BoundPortsRequest, RequestMasterState) answer at once, without a promise.
    return stateHandlers.reply(this, message) ?? this.replyOther(message, ctx);
  }

  private async replyOther(message: WireMessage, ctx: RpcCallContext): Promise<unknown> {
    const reply =
      (await driverHandlers.reply(this, message)) ?? (await appHandlers.reply(this, message));
    if (reply === undefined) throw unsupported(message, ctx);
    return reply;
  }

  override async onDisconnected(address: string): Promise<void> {
    this.log.info(`${address} got disassociated, removing it.`);
    const worker = this.addressToWorker.get(address);
    if (worker) await this.removeWorker(worker, `${address} got disassociated`);
    const app = this.addressToApp.get(address);
    if (app) await this.removeApplication(app, 'FINISHED');
    this.broadcaster.dropAddress(address);
    if (this.state === 'RECOVERING' && this.canCompleteRecovery()) await completeRecovery(this);
  }

  /** Called after stepping down to STANDBY (Spark's master exits here; Wick's stays a standby). */
  onLeadershipRevoked: () => void = () => {};

  setState(state: RecoveryState): void {
    this.state = state;
    this.broadcaster.statusChanged(state);
    const masters = this.masters();
    if (masters) this.broadcaster.mastersChanged(masters);
  }

  canCompleteRecovery(): boolean {
    for (const w of this.workers.values()) if (w.state === 'UNKNOWN') return false;
    for (const a of this.idToApp.values()) if (a.state === 'UNKNOWN') return false;
    return true;
  }

  // Workers

  /** Adds a worker, replacing an UNKNOWN one at the same address; false if that address is taken. */
  async registerWorker(worker: WorkerInfo): Promise<boolean> {
    for (const w of [...this.workers.values()]) {
      if (w.host === worker.host && w.port === worker.port && w.state === 'DEAD') {
        this.workers.delete(w.id);
        this.broadcaster.workerRemoved(w.id);
      }
    }
    const address = worker.endpoint.address;
    const old = this.addressToWorker.get(address);
    if (old) {
      if (old.state !== 'UNKNOWN') {
        this.log.info(`Attempted to re-register worker at same address: ${address}`);
        return false;
      }
      await this.removeWorker(old, 'Worker replaced by a new worker with same address');
    }
    this.workers.set(worker.id, worker);
    this.idToWorker.set(worker.id, worker);
    this.addressToWorker.set(address, worker);
    this.broadcaster.worker(worker);
    return true;
  }

  async removeWorker(worker: WorkerInfo, msg: string): Promise<void> {
    this.log.info(`Removing worker ${worker.id} on ${worker.hostPort}: ${msg}`);
    worker.state = 'DEAD';
    this.idToWorker.delete(worker.id);
    this.addressToWorker.delete(worker.endpoint.address);
    for (const exec of [...worker.executors.values()]) {
      const app = this.idToApp.get(exec.appId);
      exec.setState('LOST', this.clock.now(), 'worker lost');
      worker.removeExecutor(exec);
      if (app) {
        app.driver.send(
          ExecutorUpdated({ id: exec.id, state: 'LOST', message: 'worker lost', workerLost: true }),
        );
        app.removeExecutor(exec);
        this.broadcaster.app(app);
      }
    }
    for (const driver of [...worker.drivers.values()]) {
      if (driver.desc.supervise) {
        this.log.info(`Re-launching ${driver.id}`);
        this.relaunchDriver(driver);
      } else {
        this.log.info(`Not re-launching ${driver.id} because it was not supervised`);
        await this.removeDriver(driver.id, 'ERROR', undefined);
      }
    }
    for (const app of this.idToApp.values()) {
      app.driver.send(WorkerRemoved({ id: worker.id, host: worker.host, message: msg }));
    }
    this.broadcaster.worker(worker);
    await this.persistence.removeWorker(worker.id);
    this.schedule();
  }

  // Applications

  createApplication(
    desc: ApplicationInfo['desc'],
    driver: ApplicationInfo['driver'],
  ): ApplicationInfo {
    const now = this.clock.now();
    const id = newAppId(now, this.nextAppNumber++);
    return new ApplicationInfo(id, desc, driver, now, this.conf.get(MasterConf.defaultCores));
  }

  registerApplication(app: ApplicationInfo): boolean {
    const address = app.driver.address;
    if (this.addressToApp.has(address)) {
      this.log.info(`Attempted to re-register application at same address: ${address}`);
      return false;
    }
    this.idToApp.set(app.id, app);
    this.addressToApp.set(address, app);
    this.waitingApps.push(app);
    this.broadcaster.app(app);
    return true;
  }

  async removeApplication(app: ApplicationInfo, state: ApplicationState): Promise<void> {
    if (!this.idToApp.has(app.id)) return;
    this.log.info(`Removing app ${app.id}`);
    this.idToApp.delete(app.id);
    this.addressToApp.delete(app.driver.address);
    const i = this.waitingApps.indexOf(app);
    if (i >= 0) this.waitingApps.splice(i, 1);
    this.retain(this.completedApps, app, this.conf.get(MasterConf.retainedApplications), (a) =>
      this.broadcaster.appRemoved(a.id),
    );
    for (const exec of [...app.executors.values()]) this.killExecutor(app, exec);
    app.state = state;
    app.endTime = this.clock.now();
    if (state !== 'FINISHED') app.driver.send(ApplicationRemoved({ message: state }));
    this.broadcaster.app(app);
    await this.persistence.removeApplication(app.id);
    this.schedule();
    for (const w of this.idToWorker.values()) w.endpoint.send(ApplicationFinished({ id: app.id }));
  }

  killExecutor(app: ApplicationInfo, exec: ExecutorDesc): void {
    exec.worker.removeExecutor(exec);
    exec.worker.endpoint.send(
      KillExecutor({ masterUrl: this.masterUrl, appId: app.id, execId: exec.id }),
    );
    exec.setState('KILLED', this.clock.now());
    app.removeExecutor(exec);
    this.broadcaster.worker(exec.worker);
  }

  // Drivers

  relaunchDriver(driver: DriverInfo): void {
    driver.worker?.removeDriver(driver);
    if (driver.worker) this.broadcaster.worker(driver.worker);
    driver.worker = undefined;
    driver.state = 'RELAUNCHING';
    this.waitingDrivers.push(driver);
    this.broadcaster.driver(driver);
    this.schedule();
  }

  async removeDriver(
    driverId: string,
    finalState: DriverState,
    exception: string | undefined,
  ): Promise<void> {
    const driver = this.drivers.get(driverId);
    if (!driver) {
      this.log.warn(`Asked to remove unknown driver: ${driverId}`);
      return;
    }
    this.log.info(`Removing driver: ${driverId}`);
    this.drivers.delete(driverId);
    const i = this.waitingDrivers.indexOf(driver);
    if (i >= 0) this.waitingDrivers.splice(i, 1);
    this.retain(this.completedDrivers, driver, this.conf.get(MasterConf.retainedDrivers), (d) =>
      this.broadcaster.driverRemoved(d.id),
    );
    driver.state = finalState;
    driver.exception = exception;
    if (driver.worker) {
      driver.worker.removeDriver(driver);
      this.broadcaster.worker(driver.worker);
    }
    this.broadcaster.driver(driver);
    await this.persistence.removeDriver(driverId);
    this.schedule();
  }

  // Scheduling

  /** Places waiting drivers, then executors for waiting apps (see scheduling.ts). */
  schedule(): void {
    if (this.state !== 'ALIVE') return;
    const apps = this.waitingApps.filter((a) => a.coresLeft > 0);
    // Nothing waits: nothing to place and no waiting reason to update. Without this, every worker
    // registration walked and sorted all workers: quadratic, 20 s of CPU to register 10,000.
    if (apps.length === 0 && this.waitingDrivers.length === 0) return;
    const alive = [...this.idToWorker.values()].filter((w) => w.isAlive);
    const result = schedule({
      drivers: this.waitingDrivers.map((d) => ({ id: d.id, mem: d.desc.mem, cores: d.desc.cores })),
      apps: apps.map((a) => ({
        id: a.id,
        coresLeft: a.coresLeft,
        memoryPerExecutorMB: a.desc.memoryPerExecutorMB,
        coresPerExecutor: a.desc.coresPerExecutor,
        executorCount: a.executors.size,
      })),
      workers: alive.map((w) => ({ id: w.id, coresFree: w.coresFree, memoryFree: w.memoryFree })),
      spreadOut: this.conf.get(MasterConf.spreadOut),
      random: this.random,
    });
    for (const { driverId, workerId } of result.drivers) {
      const driver = this.drivers.get(driverId) as DriverInfo;
      const worker = this.idToWorker.get(workerId) as WorkerInfo;
      this.launchDriver(worker, driver);
    }
    for (const a of result.executors) {
      const app = this.idToApp.get(a.appId) as ApplicationInfo;
      const worker = this.idToWorker.get(a.workerId) as WorkerInfo;
      this.launchExecutor(worker, app, a.cores);
    }
    this.updateWaitingReasons(apps, alive);
  }

  private launchDriver(worker: WorkerInfo, driver: DriverInfo): void {
    this.log.info(`Launching driver ${driver.id} on worker ${worker.id}`);
    const i = this.waitingDrivers.indexOf(driver);
    if (i >= 0) this.waitingDrivers.splice(i, 1);
    worker.addDriver(driver);
    driver.worker = worker;
    driver.state = 'RUNNING';
    worker.endpoint.send(LaunchDriver({ driverId: driver.id, driverDesc: driver.desc }));
    this.broadcaster.worker(worker);
    this.broadcaster.driver(driver);
  }

  private launchExecutor(worker: WorkerInfo, app: ApplicationInfo, cores: number): void {
    const exec = app.addExecutor(worker, cores, this.clock.now());
    this.log.info(`Launching executor ${exec.fullId} on worker ${worker.id}`);
    worker.addExecutor(exec);
    worker.endpoint.send(
      LaunchExecutor({
        masterUrl: this.masterUrl,
        appId: app.id,
        execId: exec.id,
        appDesc: app.desc,
        cores: exec.cores,
        memory: exec.memory,
      }),
    );
    app.driver.send(
      ExecutorAdded({
        id: exec.id,
        workerId: worker.id,
        hostPort: worker.hostPort,
        cores: exec.cores,
        memory: exec.memory,
      }),
    );
    app.state = 'RUNNING';
    this.broadcaster.worker(worker);
    this.broadcaster.app(app);
  }

  private updateWaitingReasons(apps: ApplicationInfo[], alive: WorkerInfo[]): void {
    const byId = new Map(alive.map((w) => [w.id, w]));
    const workers = alive.map((w) => ({
      id: w.id,
      coresFree: w.coresFree,
      memoryFree: w.memoryFree,
    }));
    for (const app of apps) {
      if (app.state !== 'WAITING') continue;
      const reason = waitingReason(
        {
          id: app.id,
          coresLeft: app.coresLeft,
          memoryPerExecutorMB: app.desc.memoryPerExecutorMB,
          coresPerExecutor: app.desc.coresPerExecutor,
        },
        workers,
        (w) => byId.get(w.id)?.memory ?? 0,
      );
      if (reason !== app.waitingReason) {
        app.waitingReason = reason;
        this.broadcaster.app(app);
      }
    }
  }

  /** Keeps at most `max` completed entries, dropping the oldest tenth when full (as Spark does). */
  private retain<T>(list: T[], item: T, max: number, dropped: (t: T) => void): void {
    if (list.length >= max) {
      for (const t of list.splice(0, Math.max(1, Math.floor(max / 10)))) dropped(t);
    }
    list.push(item);
  }

  // State for clients

  snapshot(): MessageOf<typeof MasterStateResponse> {
    this.broadcaster.flush();
    const active = [...this.idToApp.values()];
    return MasterStateResponse({
      url: this.masterUrl,
      webUiUrl: this.webUiUrl,
      status: this.state,
      workers: [...this.workers.values()].map((w) => w.summary()),
      activeApps: active.map((a) => a.summary()),
      completedApps: this.completedApps.map((a) => a.summary()),
      activeDrivers: [...this.drivers.values()].map((d) => d.summary()),
      completedDrivers: this.completedDrivers.map((d) => d.summary()),
      ...(this.masterUrls ? { masters: this.masters() } : {}),
      seq: this.broadcaster.seq,
    });
  }

  private scheduleTimeoutCheck(): void {
    this.timeoutTimer = this.clock.setTimeout(() => {
      if (this.rpcEnv.isStopped) return;
      this.self.send({ type: 'CheckForWorkerTimeOut' });
      this.scheduleTimeoutCheck();
    }, this.workerTimeoutMs);
  }
}
