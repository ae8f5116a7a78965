import type { WickConf } from '../../conf/WickConf.js';
import type { ContentStore } from '../../files/ContentStore.js';
import type { RecoveryState } from '../../protocol/common.js';
import type { AnyMessageDef } from '../../protocol/registry.js';
import type { MasterEntry } from '../../protocol/state.js';
import type { RpcEndpointRef, RpcEnv } from '../../rpc/index.js';
import type { HandlerOf } from '../../rpc/RpcEndpoint.js';
import type { Clock } from '../../util/clock.js';
import type { ClusterState } from '../ClusterState.js';
import type { OperationsContext } from '../operations/context.js';

/**
 * What the Master's handlers are given: a handler translates a message into a call of an
 * operation (operations/, with `ops`), reading the tables through a view that cannot change them,
 * and answers. It never gets the Master endpoint, and cannot write an entity or push a change:
 * the operations change the tables, and the tables announce each change.
 */
export interface HandlerContext {
  /** Its web UI's /api/v1 at `path`, answered in-process (RequestAppStatusApi). */
  apiV1(path: string): Promise<{ status: number; body: string }>;
  /** For the operations. */
  readonly ops: OperationsContext;
  readonly cluster: ClusterView;
  /** The master's own state (ALIVE, STANDBY, RECOVERING, COMPLETING_RECOVERY). */
  readonly status: RecoveryState;
  readonly conf: WickConf;
  readonly clock: Clock;
  /** wick://host:port */
  readonly masterUrl: string;
  /** host:port */
  readonly address: string;
  readonly webUiUrl: string;
  readonly webUiPort: number;
  readonly self: RpcEndpointRef;
  /** The master's RpcEnv, for refs over the connection a message came on. */
  readonly rpc: Pick<RpcEnv, 'refOver' | 'endpointRef' | 'clusterSecret' | 'rpcAddress'>;
  /** Where cluster-mode applications' files are kept; none: refused. */
  readonly files: ContentStore | undefined;
  /** Every master and its state, unknown with a single master. */
  masters(): MasterEntry[] | undefined;
  /** The subscriptions to the master's state (its StateBroadcaster). */
  readonly subscriptions: Subscriptions;
  /** Completes a recovery once every persisted worker and application has answered. */
  completeRecoveryIfAnswered(): Promise<void>;
  /** The user's token a submission's key was handed to (tokens/); undefined: none. */
  tokenOwnerOf(submission: string): string | undefined;
}

/** The tables, read only: lookups and snapshots, no change. */
export type ClusterView = Pick<
  ClusterState,
  | 'workerById'
  | 'workerByAddress'
  | 'knowsWorker'
  | 'allWorkers'
  | 'registeredWorkers'
  | 'appById'
  | 'appByAddress'
  | 'activeApps'
  | 'completedAppById'
  | 'driverById'
  | 'findDriver'
  | 'latestRunOf'
  | 'activeDrivers'
  | 'isWaiting'
  | 'summaries'
  | 'page'
  | 'activeAppCount'
  | 'activeDriverCount'
>;

/** Subscribing to the master's changes, and the number of the last one pushed. */
export interface Subscriptions {
  subscribe(ref: RpcEndpointRef): void;
  unsubscribe(ref: RpcEndpointRef): void;
  /** Pushes what is pending, then gives the seq a snapshot carries (it misses no change). */
  flushedSeq(): number;
}

/**
 * How a handler file registers its handlers: the endpoint hands its own `on` to each concern's
 * `xxxHandlers(context, on)` in its constructor, so registering stays the endpoint's business.
 */
export type HandlerRegistry = <D extends AnyMessageDef>(def: D, handler: HandlerOf<D>) => void;
