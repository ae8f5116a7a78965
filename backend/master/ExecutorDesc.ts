import { MAX_EXECUTOR_HISTORY } from '../protocol/bounds.js';
import type { ExecutorState } from '../protocol/common.js';
import type { ResourceAddresses } from '../protocol/resources.js';
import type { ExecutorSummary } from '../protocol/state.js';
import type { WorkerInfo } from './WorkerInfo.js';

/** One executor of an application on a worker, as the Master tracks it (Spark's ExecutorDesc). */
export class ExecutorDesc {
  state: ExecutorState = 'LAUNCHING';
  exitStatus: number | undefined;
  message: string | undefined;
  /** Its driver said it registered (ExecutorRegistered): it serves the application. */
  registered = false;
  readonly history: { state: ExecutorState; time: number; message?: string; exitStatus?: number }[];
  /** The custom resources' addresses it holds on its worker (given before WorkerInfo.addExecutor). */
  resources: ResourceAddresses = {};

  constructor(
    readonly id: number,
    readonly appId: string,
    readonly worker: WorkerInfo,
    readonly cores: number,
    readonly memory: number,
    now: number,
  ) {
    this.history = [{ state: 'LAUNCHING', time: now }];
  }

  /**
   * Addresses it was said to hold that its worker does not have free (a recovered executor whose
   * worker now offers other addresses): dropped from what it holds, so that freeing it frees only
   * its own.
   */
  resourcesRefused(refused: ResourceAddresses): void {
    for (const [name, addresses] of Object.entries(refused)) {
      const kept = (this.resources[name] ?? []).filter((a) => !addresses.includes(a));
      if (kept.length > 0) this.resources[name] = kept;
      else delete this.resources[name];
    }
  }

  get fullId(): string {
    return `${this.appId}/${this.id}`;
  }

  setState(state: ExecutorState, now: number, message?: string, exitStatus?: number): void {
    this.state = state;
    this.message = message ?? this.message;
    this.exitStatus = exitStatus ?? this.exitStatus;
    const entry: (typeof this.history)[number] = { state, time: now };
    if (message !== undefined) entry.message = message;
    if (exitStatus !== undefined) entry.exitStatus = exitStatus;
    this.history.push(entry);
    // A worker decides how often an executor changes state: keep the most recent ones only.
    if (this.history.length > MAX_EXECUTOR_HISTORY) {
      this.history.splice(0, this.history.length - MAX_EXECUTOR_HISTORY);
    }
  }

  summary(): ExecutorSummary {
    const s: ExecutorSummary = {
      appId: this.appId,
      id: this.id,
      workerId: this.worker.id,
      workerHostPort: this.worker.hostPort,
      cores: this.cores,
      memory: this.memory,
      state: this.state,
      history: this.history.map((h) => ({ ...h })),
    };
    if (this.exitStatus !== undefined) s.exitStatus = this.exitStatus;
    if (this.message !== undefined) s.message = this.message;
    if (Object.keys(this.resources).length > 0) s.resources = structuredClone(this.resources);
    return s;
  }
}
