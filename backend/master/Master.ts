import { MasterConf } from '../conf/master.js';
import type { WickConf } from '../conf/WickConf.js';
import type { ContentStore } from '../files/ContentStore.js';
import type { RecoveryState } from '../protocol/common.js';
import { MASTER_ENDPOINT, MASTER_SYSTEM } from '../protocol/endpoints.js';
import type { AnyMessageDef } from '../protocol/registry.js';
import type { MasterEntry } from '../protocol/state.js';
import { RpcEndpoint } from '../rpc/index.js';
import { isClientAddress } from '../rpc/RpcAddress.js';
import type { HandlerOf } from '../rpc/RpcEndpoint.js';
import type { Clock, TimerHandle } from '../util/clock.js';
import { systemClock } from '../util/clock.js';
import { ClusterState } from './ClusterState.js';
import { appHandlers, driverDisconnected } from './handlers/apps.js';
import { driverHandlers } from './handlers/drivers.js';
import { fileHandlers } from './handlers/files.js';
import { stateHandlers } from './handlers/state.js';
import { removeWorker, workerHandlers } from './handlers/workers.js';
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
import type { PersistenceEngine } from './persistence/PersistenceEngine.js';
import { BlackHolePersistenceEngine } from './persistence/PersistenceEngine.js';
import { Recovery } from './recovery.js';
import { StateBroadcaster } from './StateBroadcaster.js';

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
}

/**
 * How a handler file registers its handlers: the endpoint hands its own `on` to each concern's
 * `xxxHandlers(master, on)` in its constructor, so registering stays the endpoint's business.
 */
export type HandlerRegistry = <D extends AnyMessageDef>(def: D, handler: HandlerOf<D>) => void;

/**
 * The Master endpoint (Spark's Master): wiring over its parts. The cluster's tables are a
 * ClusterState, the pushes to subscribers a StateBroadcaster, leadership and recovery a Recovery,
 * placement placement.ts over the pure scheduling.ts; the handlers live in handlers/ by concern
 * (workers, apps, drivers, state), each registering its own messages.
 */
export class Master extends RpcEndpoint implements LeaderElectable {
  static readonly ENDPOINT_NAME = MASTER_ENDPOINT;
  static readonly SYSTEM_NAME = MASTER_SYSTEM;

  readonly broadcaster: StateBroadcaster;
  readonly cluster: ClusterState;
  readonly recovery = new Recovery(this);
  readonly conf: WickConf;
  readonly clock: Clock;
  readonly random: () => number;
  readonly persistence: PersistenceEngine;
  readonly webUiPort: number;
  readonly webUiUrl: string;
  readonly files: ContentStore | undefined;
  readonly workerTimeoutMs: number;
  private status: RecoveryState = 'STANDBY';
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
    this.files = options.files;
    this.workerTimeoutMs = this.conf.get(MasterConf.workerTimeout);
    this.leaderElection = options.leaderElection ?? monarchyLeaderAgent;
    this.broadcaster = new StateBroadcaster({
      maxBacklog: this.conf.get(MasterConf.subscriberMaxBacklog),
      links: {
        backlog: (ref) => this.rpcEnv.backlog(ref).bytes,
        isClientOnly: (address) =>
          isClientAddress(address) &&
          !this.cluster.appByAddress(address) &&
          !this.cluster.workerByAddress(address),
        disconnect: (ref, reason) => this.rpcEnv.disconnect(ref, reason),
      },
    });
    this.cluster = new ClusterState({
      retainedApplications: this.conf.get(MasterConf.retainedApplications),
      retainedDrivers: this.conf.get(MasterConf.retainedDrivers),
      forgotten: this.broadcaster,
    });

    const on: HandlerRegistry = (def, handler) => this.on(def, handler);
    workerHandlers(this, on);
    appHandlers(this, on);
    driverHandlers(this, on);
    stateHandlers(this, on);
    fileHandlers(this, on);
    on(ElectedLeader, () => this.recovery.electedLeader());
    on(RevokedLeadership, () => {
      this.log.error('Leadership has been revoked -- stepping down to STANDBY.');
      this.recovery.stepDown();
      this.onLeadershipRevoked();
    });
    on(CompleteRecovery, () => this.recovery.complete());
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
    this.recovery.stop();
    await this.leaderAgent?.stop();
    this.broadcaster.flush();
    await this.persistence.close();
  }

  override async onDisconnected(address: string): Promise<void> {
    this.log.info(`${address} got disassociated, removing it.`);
    const worker = this.cluster.workerByAddress(address);
    if (worker) await removeWorker(this, worker, `${address} got disassociated`);
    const app = this.cluster.appByAddress(address);
    if (app) await driverDisconnected(this, app);
    this.broadcaster.dropAddress(address);
    this.files?.peerGone(address);
    await this.recovery.completeIfAnswered();
  }

  /** Called after stepping down to STANDBY (Spark's master exits here; Wick's stays a standby). */
  onLeadershipRevoked: () => void = () => {};

  setState(state: RecoveryState): void {
    this.status = state;
    this.broadcaster.statusChanged(state);
    const masters = this.masters();
    if (masters) this.broadcaster.mastersChanged(masters);
  }

  private scheduleTimeoutCheck(): void {
    this.timeoutTimer = this.clock.setTimeout(() => {
      if (this.rpcEnv.isStopped) return;
      this.self.send(CheckForWorkerTimeOut({}));
      this.scheduleTimeoutCheck();
    }, this.workerTimeoutMs);
  }
}
