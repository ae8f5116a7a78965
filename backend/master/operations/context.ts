import type { WickConf } from '../../conf/WickConf.js';
import type { ContentStore } from '../../files/ContentStore.js';
import type { RecoveryState } from '../../protocol/common.js';
import type { Clock } from '../../util/clock.js';
import type { MasterAppStatus } from '../appStatus/MasterAppStatus.js';
import type { ClusterState } from '../ClusterState.js';
import type { PersistenceEngine } from '../persistence/PersistenceEngine.js';

/**
 * What the master's operations work with: its tables (which announce every change to the
 * subscribers themselves), its persisted state, and its settings. Handlers, the recovery and the
 * timers call the operations with it; none of them needs the Master endpoint.
 */
export interface OperationsContext {
  readonly cluster: ClusterState;
  readonly persistence: PersistenceEngine;
  readonly conf: WickConf;
  readonly clock: Clock;
  readonly random: () => number;
  /** Where cluster-mode applications' files are kept; none: refused. */
  readonly files: ContentStore | undefined;
  /** The master's own state: only a leader (ALIVE) schedules. */
  readonly status: RecoveryState;
  /** wick://host:port, as LaunchExecutor and KillExecutor name it. */
  readonly masterUrl: string;
  /** wick.worker.timeout, in ms. */
  readonly workerTimeoutMs: number;
  /** The applications' jobs, stages and tasks, from their drivers' reports. */
  readonly appStatus: MasterAppStatus;
  /**
   * Claims a new application id where the applications log (MasterOptions.eventLogs): false when
   * another master, or a log, has it. None: ids are this master's alone, as Spark's.
   */
  readonly claimAppId?: ((id: string) => Promise<boolean>) | undefined;
}
