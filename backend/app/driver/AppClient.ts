import { masterState, noMasterReachable, reachMasters } from '../../client/masterConnection.js';
import {
  ApplicationRemoved,
  ExecutorAdded,
  ExecutorDecommissioned,
  ExecutorRegistered,
  ExecutorUpdated,
  MasterChangeAcknowledged,
  RegisterApplication,
  RegisteredApplication,
  ReportListenerEvents,
  RequestExecutors,
  UnregisterApplication,
  WorkerRemoved,
} from '../../protocol/app.js';
import {
  type AppFailure,
  type ApplicationDescription,
  isExecutorFinished,
} from '../../protocol/common.js';
import { MasterChanged } from '../../protocol/deploy.js';
import { APP_CLIENT_ENDPOINT } from '../../protocol/endpoints.js';
import type { WickListenerEvent } from '../../protocol/listener.js';
import type { AnyMessageDef, WireMessage } from '../../protocol/registry.js';
import type { TaskEndsCoalesced } from '../../protocol/statusReport.js';
import { principalText } from '../../rpc/credentials.js';
import { RpcEndpoint, type RpcEndpointRef, type RpcSenderContext } from '../../rpc/index.js';
import { firstLine } from '../../shared/executorFailure.js';
import { getLogger } from '../../util/log.js';

const log = getLogger('StandaloneAppClient');

export interface AppClientListener {
  /** Registered, as `appId`; its executors will prove `appKey` (none in a cluster running open). */
  connected(appId: string, appKey: string | undefined): void;
  executorAdded(
    id: number,
    workerId: string,
    hostPort: string,
    cores: number,
    memory: number,
  ): void;
  executorRemoved(
    id: number,
    message: string,
    exitStatus: number | undefined,
    workerLost: boolean,
  ): void;
  /** The executor's worker decommissions: it is to run out its tasks and stop. */
  executorDecommissioned?(id: number, message: string): void;
  /** A worker the application used was lost (its shuffle service's outputs with it). */
  workerRemoved?(workerId: string, host: string, message: string): void;
  /** The master ended the application (killed, or its executors kept failing). */
  dead(reason: string): void;
}

/**
 * The application's link to the masters (Spark's StandaloneAppClient): registers with every
 * master, follows the one that accepts, and relays executor changes to the scheduler backend.
 */
export class AppClient extends RpcEndpoint {
  static readonly ENDPOINT_NAME = APP_CLIENT_ENDPOINT;

  appId: string | undefined;
  /** The master's default for wick.eventLog.enabled (a local cluster's: on). */
  eventLogByDefault = false;
  master: RpcEndpointRef | undefined;
  private registered!: Promise<string>;
  private resolveRegistered!: (appId: string) => void;

  constructor(
    private readonly masterAddresses: string[],
    private readonly desc: ApplicationDescription,
    private readonly listener: AppClientListener,
  ) {
    super();
    this.registered = new Promise((r) => {
      this.resolveRegistered = r;
    });

    this.on(RegisteredApplication, (m) => {
      this.appId = m.appId;
      this.eventLogByDefault = m.eventLogByDefault === true;
      this.master = this.rpcEnv.endpointRef(m.master);
      log.info(`Connected to Wick cluster with app ID ${m.appId}`);
      this.listener.connected(m.appId, m.appKey);
      this.resolveRegistered(m.appId);
    });
    this.on(ExecutorAdded, (m) => {
      log.info(
        `Executor added: ${this.appId}/${m.id} on ${m.workerId} (${m.hostPort}) with ${m.cores} core(s)`,
      );
      this.listener.executorAdded(m.id, m.workerId, m.hostPort, m.cores, m.memory);
    });
    this.on(ExecutorUpdated, (m) => {
      log.info(
        `Executor updated: ${this.appId}/${m.id} is now ${m.state}${m.message ? ` (${firstLine(m.message)})` : ''}`,
      );
      if (isExecutorFinished(m.state)) {
        this.listener.executorRemoved(m.id, m.message ?? m.state, m.exitStatus, m.workerLost);
      }
    });
    this.on(ExecutorDecommissioned, (m) => {
      log.info(`Executor decommissioned: ${this.appId}/${m.id} on ${m.workerHost} (${m.message})`);
      this.listener.executorDecommissioned?.(m.id, m.message);
    });
    // Its executors' ExecutorUpdated say what the loss means to their tasks; this, what it
    // means to the map outputs its shuffle service served (Spark's workerRemoved).
    this.on(WorkerRemoved, (m) => {
      log.info(`Worker ${m.id} on ${m.host} was lost: ${m.message}`);
      this.listener.workerRemoved?.(m.id, m.host, m.message);
    });
    this.on(ApplicationRemoved, (m) => {
      log.error(`Master removed our application: ${m.message}`);
      this.listener.dead(`Master removed our application: ${m.message}`);
    });
    this.on(MasterChanged, (m) => {
      log.info(`Master has changed, new master is at wick://${m.master.address}`);
      this.master = this.rpcEnv.endpointRef(m.master);
      if (this.appId) this.master.send(MasterChangeAcknowledged({ appId: this.appId }));
    });
  }

  /** What the master says counts only over the connection this driver dialled to it. */
  override senderProblem(
    def: AnyMessageDef,
    message: WireMessage,
    sender: RpcSenderContext,
  ): string | undefined {
    const c = sender.connection;
    if (c === undefined || !def.from.includes('master')) return undefined;
    if (def === MasterChanged) {
      const named = (message as { master?: { address?: string } }).master?.address ?? '';
      if (!this.masterAddresses.includes(named)) {
        return `it names ${named}, which is not one of this application's masters (${this.masterAddresses.join(', ')})`;
      }
      const p = c.principal;
      if (p.kind === 'open' || p.kind === 'cluster' || (p.kind === 'app' && p.id === this.appId)) {
        return undefined;
      }
      return `the sender proved ${principalText(p)}, not this application's key`;
    }
    if (c.direction !== 'outbound') {
      return 'it came over a connection the sender opened; the master is heard over the connection this driver dials to it';
    }
    if (def !== RegisteredApplication && this.master && this.master.address !== c.peer) {
      return `it came from ${c.peer}, and this application follows ${this.master.address}`;
    }
    return undefined;
  }

  /** Registers with every master; resolves with the app id once one accepts. */
  async register(timeoutMs: number): Promise<string> {
    const { refs, errors } = await reachMasters(this.rpcEnv, this.masterAddresses);
    for (const ref of refs) {
      log.info(`Connecting to master wick://${ref.address}...`);
      ref.send(RegisterApplication({ appDescription: this.desc, driver: this.self.toData() }));
    }
    if (refs.length === 0) throw noMasterReachable(errors);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        void this.whyNotRegistered(refs, errors).then((why) => reject(new Error(why)));
      }, timeoutMs);
    });
    try {
      return await Promise.race([this.registered, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Asks the master for no more executors than `total` (Spark's requestTotalExecutors). */
  requestTotalExecutors(total: number): void {
    if (this.master && this.appId)
      this.master.send(RequestExecutors({ appId: this.appId, requestedTotal: total }));
  }

  /**
   * Tells the master that an executor registered with the driver: it serves the application, and
   * the master stops counting its executors' failures in a row.
   */
  executorRegistered(execId: number): void {
    this.master?.send(ExecutorRegistered({ execId }));
  }

  /**
   * Reports a batch of the driver's listener events to the master it follows (status/
   * MasterStatusReporter.ts), over the connection it registered on; resolves once applied.
   */
  async reportListenerEvents(
    events: WickListenerEvent[],
    coalesced: TaskEndsCoalesced[],
    timeoutMs: number,
  ): Promise<void> {
    if (!this.master || !this.appId) return;
    await this.master.ask(
      ReportListenerEvents({
        appId: this.appId,
        events,
        ...(coalesced.length > 0 ? { coalesced } : {}),
      }),
      { timeout: timeoutMs },
    );
  }

  /**
   * Ends the application: FAILED with `failure` (what the driver saw), KILLED with `killed` too
   * (the process got a signal), else FINISHED. `now`:
   * written at once rather than at the end of the turn (the process is exiting: no turn ends).
   */
  unregister(failure?: AppFailure, now = false, killed = false): void {
    if (this.master && this.appId) {
      this.master.send(
        UnregisterApplication(
          failure
            ? { appId: this.appId, failure, ...(killed ? { killed: true as const } : {}) }
            : { appId: this.appId },
        ),
      );
      if (now) this.master.flush();
    }
  }

  /** Explains a registration that timed out: which masters answered, and in what state. */
  private async whyNotRegistered(refs: RpcEndpointRef[], errors: string[]): Promise<string> {
    const states = await Promise.all(
      refs.map(async (ref) => {
        try {
          const s = await masterState(ref, 5000);
          return `${ref.address}: ${s.status}${s.status === 'ALIVE' ? '' : ' (only an ALIVE master accepts applications)'}`;
        } catch (err) {
          return `${ref.address}: ${(err as Error).message}`;
        }
      }),
    );
    return `No master accepted the application. Masters:\n  ${[...states, ...errors].join('\n  ')}`;
  }
}
