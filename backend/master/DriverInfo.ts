import type { DriverDescription, DriverState } from '../protocol/common.js';
import type { DriverSummary } from '../protocol/state.js';
import type { WorkerInfo } from './WorkerInfo.js';

/** What the Master knows of one driver in cluster deploy mode (Spark's DriverInfo). */
export class DriverInfo {
  state: DriverState = 'SUBMITTED';
  worker: WorkerInfo | undefined;
  exception: string | undefined;

  constructor(
    readonly id: string,
    readonly desc: DriverDescription,
    readonly submitDate: number,
  ) {}

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
    return s;
  }
}
