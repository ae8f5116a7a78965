import type { DriverDescription, DriverState } from '../protocol/common.js';
import type { DriverSummary } from '../protocol/state.js';
import type { PersistedDriver } from './persistence/PersistenceEngine.js';
import type { WorkerInfo } from './WorkerInfo.js';

/** What the Master knows of one driver in cluster deploy mode (Spark's DriverInfo). */
export class DriverInfo {
  state: DriverState = 'SUBMITTED';
  worker: WorkerInfo | undefined;
  exception: string | undefined;
  /**
   * A user asked the master to kill it: its application's connection may drop before the driver
   * could unregister (the worker's SIGKILL after its grace), and that is a kill, not a failure.
   */
  killRequested = false;

  constructor(
    readonly id: string,
    readonly desc: DriverDescription,
    readonly submitDate: number,
    /** The driver this one is a relaunch of (see relaunchDriver). */
    readonly relaunchedFrom?: string,
    /**
     * The user's token that submitted it (tokens/): kept in its record, so that the token still
     * owns it after a failover and in its relaunches.
     */
    readonly owner?: string,
  ) {}

  /** Its record for the PersistenceEngine. */
  persisted(): PersistedDriver {
    const p: PersistedDriver = { id: this.id, desc: this.desc, submitDate: this.submitDate };
    if (this.relaunchedFrom !== undefined) p.relaunchedFrom = this.relaunchedFrom;
    if (this.owner !== undefined) p.owner = this.owner;
    return p;
  }

  summary(): DriverSummary {
    const s: DriverSummary = {
      id: this.id,
      state: this.state,
      appPath: this.desc.appPath,
      cores: this.desc.cores,
      mem: this.desc.mem,
      supervise: this.desc.supervise,
      submitDate: this.submitDate,
    };
    if (this.worker) {
      s.workerId = this.worker.id;
      s.workerHostPort = this.worker.hostPort;
    }
    if (this.exception !== undefined) s.exception = this.exception;
    if (this.relaunchedFrom !== undefined) s.relaunchedFrom = this.relaunchedFrom;
    return s;
  }
}
