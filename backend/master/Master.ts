import type { AppStatusSource } from '../appstatus/AppStatusSource.js';
import { AppConf } from '../conf/app.js';
import { MasterConf } from '../conf/master.js';
import type { WickConf } from '../conf/WickConf.js';
import type { ContentStore } from '../files/ContentStore.js';
import type { RecoveryState } from '../protocol/common.js';
import { MASTER_ENDPOINT, MASTER_SYSTEM } from '../protocol/endpoints.js';
import { RpcError, RpcErrorCode } from '../protocol/errors.js';
import type { MasterEntry } from '../protocol/state.js';
import { RpcEndpoint } from '../rpc/index.js';
import { isClientAddress } from '../rpc/RpcAddress.js';
import type { Clock, TimerHandle } from '../util/clock.js';
import { systemClock } from '../util/clock.js';
import { MasterAppStatus } from './appStatus/MasterAppStatus.js';
import { ClusterState } from './ClusterState.js';
import { appStatusHandlers } from './handlers/appStatus.js';
import { appStatusApiHandlers } from './handlers/appStatusApi.js';
import { appHandlers } from './handlers/apps.js';
import type { HandlerContext, HandlerRegistry } from './handlers/context.js';
import { decommissionHandlers } from './handlers/decommission.js';
import { driverHandlers } from './handlers/drivers.js';
import { fileHandlers } from './handlers/files.js';
import { stateHandlers } from './handlers/state.js';
import { workerHandlers } from './handlers/workers.js';
import {
  type LeaderElectable,
  type LeaderElectionAgent,
  type LeaderElectionAgentFactory,
  monarchyLeaderAgent,
} from './leader/LeaderElectionAgent.js';
import {
  CheckForWorkerTimeOut,
  CompleteRecovery,
  ElectedLeader,
  RevokedLeadership,
} from './messages.js';
import { driverDisconnected } from './operations/apps.js';
import type { OperationsContext } from './operations/context.js';
import { removeWorker } from './operations/workers.js';
import type { PersistenceEngine } from './persistence/PersistenceEngine.js';
import { BlackHolePersistenceEngine } from './persistence/PersistenceEngine.js';
import { stopPlacement } from './placement.js';
import { Recovery } from './recovery.js';
import { StateBroadcaster } from './StateBroadcaster.js';

import { type OwnedApps, registerNoTokens, type TokenAccess } from './tokens/TokenAccess.js';

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
  /** Where cluster-mode applications' files are kept (handlers/files.ts); none: refused. */
  files?: ContentStore;
  /** Users' tokens (tokens/); none: the cluster runs open, and there are none. */
  tokens?: TokenAccess;
  /**
   * Where its applications write their event logs, when the master can know it
   * (eventlog/eventLogDir.ts masterEventLogDir): /api/v1 reads the logs of applications it no
   * longer keeps there, and each new application's id is claimed there first, so that masters
   * sharing the dir never give one id twice (eventlog/appIdClaims.ts). Default: wick.eventLog.dir,
   * and ids unclaimed.
   */
  eventLogs?: { dir: string; claimAppId?: (id: string) => Promise<boolean> };
}

/** How often the master looks for workers whose heartbeats stopped (see scheduleTimeoutCheck). */
const TIMEOUT_CHECK_MS = 500;

/**
 * The Master endpoint (Spark's Master): wiring over its parts. The cluster's tables are a
 * ClusterState, which tells its StateBroadcaster (the pushes to subscribers) of every change;
 * what happens to workers, applications and drivers lives in operations/, which the handlers
 * (handlers/, by concern, each registering its own messages), the Recovery (leadership) and the
 * timers call; placement is placement.ts over the pure scheduling.ts. The parts are private: the
 * handlers get a HandlerContext, the operations an OperationsContext, the recovery a RecoveryHost.
 */
export class Master extends RpcEndpoint implements LeaderElectable {
  static readonly ENDPOINT_NAME = MASTER_ENDPOINT;
  static readonly SYSTEM_NAME = MASTER_SYSTEM;

  readonly webUiUrl: string;
  /** The applications' jobs, stages and tasks, for /api/v1 (startMaster gives it the web UI). */
  readonly appStatus: MasterAppStatus & AppStatusSource;
  /** Its web UI's /api/v1, answered in-process (given by startMaster: the UI imports the master). */
  answerApiV1: ((path: string) => Promise<{ status: number; body: string }>) | undefined;
  private readonly broadcaster: StateBroadcaster;
  private readonly cluster: ClusterState;
  private readonly ops: OperationsContext;
  private readonly recovery: Recovery;
  private readonly persistence: PersistenceEngine;
  private readonly files: ContentStore | undefined;
  private status: RecoveryState = 'STANDBY';
  private timeoutTimer: TimerHandle | undefined;
  private readonly leaderElection: LeaderElectionAgentFactory;
  private leaderAgent: LeaderElectionAgent | undefined;
  /** The URLs of every master in the election, the leader first; unknown with a single master. */
  private masterUrls: string[] | undefined;

  constructor(options: MasterOptions) {
    super();
    const { conf } = options;
    const clock = options.clock ?? systemClock;
    this.persistence = options.persistence ?? new BlackHolePersistenceEngine();
    this.webUiUrl = options.webUiUrl;
    this.files = options.files;
    this.leaderElection = options.leaderElection ?? monarchyLeaderAgent;
    const broadcaster = new StateBroadcaster({
      maxBacklog: conf.get(MasterConf.subscriberMaxBacklog),
      links: {
        backlog: (ref) => this.rpcEnv.backlog(ref).bytes,
        isClientOnly: (address) =>
          isClientAddress(address) &&
          !this.cluster.appByAddress(address) &&
          !this.cluster.workerByAddress(address),
        disconnect: (ref, reason) => this.rpcEnv.disconnect(ref, reason),
      },
    });
    this.broadcaster = broadcaster;
    this.cluster = new ClusterState({
      retainedApplications: conf.get(MasterConf.retainedApplications),
      retainedDrivers: conf.get(MasterConf.retainedDrivers),
      listener: broadcaster,
    });
    this.appStatus = new MasterAppStatus({
      retention: {
        jobs: conf.get(AppConf.retainedJobs),
        stages: conf.get(AppConf.retainedStages),
        tasks: conf.get(AppConf.retainedTasks),
        deadExecutors: conf.get(AppConf.retainedDeadExecutors),
      },
      retainedApplications: conf.get(MasterConf.retainedApplications),
      eventLogDir: options.eventLogs?.dir ?? (conf.get(AppConf.eventLogDir) || undefined),
    });
    // Getters: the state, the address and the env are the endpoint's, and change or come later.
    const master = this;
    this.ops = {
      cluster: this.cluster,
      persistence: this.persistence,
      conf,
      clock,
      random: options.random ?? Math.random,
      files: this.files,
      workerTimeoutMs: conf.get(MasterConf.workerTimeout),
      appStatus: this.appStatus,
      claimAppId: options.eventLogs?.claimAppId,
      get status() {
        return master.status;
      },
      get masterUrl() {
        return master.masterUrl;
      },
    };
    this.recovery = new Recovery({
      ops: this.ops,
      get rpc() {
        return master.rpcEnv;
      },
      get self() {
        return master.self;
      },
      webUiUrl: this.webUiUrl,
      setStatus: (state) => this.setStatus(state),
      adoptTokens: (tokens) => options.tokens?.store.adoptShared(tokens),
    });
    const context: HandlerContext = {
      apiV1: (path) => {
        if (!master.answerApiV1)
          throw new RpcError(
            RpcErrorCode.InvalidRequest,
            `This master serves no web UI, so no /api/v1 (asked ${path})`,
          );
        return master.answerApiV1(path);
      },
      ops: this.ops,
      cluster: this.cluster,
      conf,
      clock,
      webUiUrl: this.webUiUrl,
      webUiPort: options.webUiPort,
      files: this.files,
      get status() {
        return master.status;
      },
      get masterUrl() {
        return master.masterUrl;
      },
      get address() {
        return master.address;
      },
      get self() {
        return master.self;
      },
      get rpc() {
        return master.rpcEnv;
      },
      masters: () => this.masters(),
      subscriptions: {
        subscribe: (ref) => broadcaster.subscribe(ref),
        unsubscribe: (ref) => broadcaster.unsubscribe(ref),
        flushedSeq: () => {
          broadcaster.flush();
          return broadcaster.seq;
        },
      },
      completeRecoveryIfAnswered: () => this.recovery.completeIfAnswered(),
      tokenOwnerOf: (submission) => options.tokens?.store.ownerOf(submission),
    };

    const raw: HandlerRegistry = (def, handler) => this.on(def, handler);
    // A user's token passes its check before any handler (tokens/TokenAccess.ts).
    const on = options.tokens ? options.tokens.guard(raw, this.ownedApps()) : raw;
    if (options.tokens) options.tokens.register(on, () => this.status === 'ALIVE');
    else registerNoTokens(on);
    workerHandlers(context, on);
    appHandlers(context, on);
    driverHandlers(context, on);
    stateHandlers(context, on);
    fileHandlers(context, on);
    appStatusHandlers(context, on);
    decommissionHandlers(context, on);
    appStatusApiHandlers(context, on);
    on(ElectedLeader, () => this.recovery.electedLeader());
    on(RevokedLeadership, () => {
      this.log.error('Leadership has been revoked -- stepping down to STANDBY.');
      this.recovery.stepDown();
      this.onLeadershipRevoked();
    });
    on(CompleteRecovery, () => this.recovery.complete());
  }

  /** Which submission registered an application, and whose it is, for the tokens' checks. */
  ownedApps(): OwnedApps {
    return {
      submissionOf: (id) =>
        (this.cluster.appById(id) ?? this.cluster.completedAppById(id))?.submission,
      ownerOfApp: (id) => (this.cluster.appById(id) ?? this.cluster.completedAppById(id))?.owner,
      ownerOfDriver: (id) => this.cluster.findDriver(id)?.owner,
    };
  }

  /** ALIVE, STANDBY, RECOVERING or COMPLETING_RECOVERY. */
  get state(): RecoveryState {
    return this.status;
  }

  get masterUrl(): string {
    return `wick://${this.rpcEnv.address}`;
  }

  get address(): string {
    return this.rpcEnv.address;
  }

  /**
   * The master's tables, read only: the log relay beside it finds a log's worker there
   * (startMaster.ts).
   */
  get clusterView(): HandlerContext['cluster'] {
    return this.cluster;
  }

  override async onStart(): Promise<void> {
    this.log.info(`Starting Wick master at ${this.masterUrl}`);
    this.log.info(`Master web UI at ${this.webUiUrl}`);
    this.scheduleTimeoutCheck();
    this.leaderAgent = this.leaderElection(this);
  }

  electedLeader(): void {
    this.self.send(ElectedLeader({}));
  }

  revokedLeadership(): void {
    this.self.send(RevokedLeadership({}));
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
    stopPlacement(this.ops);
    this.recovery.stop();
    await this.leaderAgent?.stop();
    this.broadcaster.stop();
    await this.persistence.close();
  }

  override async onDisconnected(address: string): Promise<void> {
    this.log.info(`${address} got disassociated, removing it.`);
    const worker = this.cluster.workerByAddress(address);
    if (worker) await removeWorker(this.ops, worker, `${address} got disassociated`);
    const app = this.cluster.appByAddress(address);
    if (app) await driverDisconnected(this.ops, app);
    this.broadcaster.dropAddress(address);
    this.files?.peerGone(address);
    await this.recovery.completeIfAnswered();
  }

  /** Called after stepping down to STANDBY (Spark's master exits here; Wick's stays a standby). */
  onLeadershipRevoked: () => void = () => {};

  /** The master's own state changes; its subscribers are told. */
  private setStatus(state: RecoveryState): void {
    this.status = state;
    this.broadcaster.statusChanged(state);
    const masters = this.masters();
    if (masters) this.broadcaster.mastersChanged(masters);
  }

  /**
   * Spark checks once per timeout, so a silent worker is seen DEAD up to two timeouts after its
   * last heartbeat; Wick checks every TIMEOUT_CHECK_MS (or timeout, when shorter), so it is seen
   * within the timeout and half a second (npm run bench -- scale measures it). A check only reads
   * each worker's last heartbeat time.
   */
  private scheduleTimeoutCheck(): void {
    this.timeoutTimer = this.ops.clock.setTimeout(
      () => {
        if (this.rpcEnv.isStopped) return;
        this.self.send(CheckForWorkerTimeOut({}));
        this.scheduleTimeoutCheck();
      },
      Math.min(this.ops.workerTimeoutMs, TIMEOUT_CHECK_MS),
    );
  }
}
