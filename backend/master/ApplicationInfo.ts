import { MAX_REMOVED_EXECUTORS } from '../protocol/bounds.js';
import type { AppFailure, ApplicationDescription, ApplicationState } from '../protocol/common.js';
import type { AppProgress, AppSummary } from '../protocol/state.js';
import type { PeerConnection, RpcEndpointRef } from '../rpc/index.js';
import { withDriverHostHint } from '../shared/executorFailure.js';
import { ExecutorDesc } from './ExecutorDesc.js';
import type { WorkerInfo } from './WorkerInfo.js';

/** What the Master knows of one application (Spark's ApplicationInfo). */
export class ApplicationInfo {
  state: ApplicationState = 'WAITING';
  readonly executors = new Map<number, ExecutorDesc>();
  readonly removedExecutors: ExecutorDesc[] = [];
  coresGranted = 0;
  endTime: number | undefined;
  /**
   * Its driver's connection to this master (registration, or acknowledging a master change): the
   * only one that may speak for it. Undefined for one recovered that has not acknowledged yet.
   */
  connection: PeerConnection | undefined;
  /**
   * Executor failures in a row, on any worker, since an executor last registered with the driver
   * (wick.deploy.maxExecutorRetries).
   */
  retryCount = 0;
  waitingReason: string | undefined;
  /** The last executor that failed by itself, and why (see AppSummary.lastExecutorFailure). */
  lastExecutorFailure: AppSummary['lastExecutorFailure'];
  /** Why it FAILED, as its driver said (or as the master saw its connection drop). */
  failure: AppFailure | undefined;
  /** Its jobs and stages in brief, from its driver's reports (ClusterState.setAppProgress). */
  progress: AppProgress | undefined;
  private nextExecutorId = 0;

  constructor(
    readonly id: string,
    readonly desc: ApplicationDescription,
    public driver: RpcEndpointRef,
    readonly startTime: number,
    readonly defaultCores: number,
    /** The submission whose key registered it, if it was one (credentials.ts). */
    readonly submission?: string,
    /**
     * The user's token whose submission it is (tokens/), kept in its record so that a master
     * that recovers it knows whose it is without the submitting master's tables.
     */
    readonly owner?: string,
  ) {}

  /** max cores, or wick.deploy.defaultCores when the app set none. */
  get requestedCores(): number {
    return this.desc.maxCores ?? this.defaultCores;
  }

  /** The most executors it wants (RequestExecutors); none set: as many as its cores allow. */
  executorLimit: number | undefined;

  get coresLeft(): number {
    return this.requestedCores - this.coresGranted;
  }

  get isFinished(): boolean {
    return this.state !== 'WAITING' && this.state !== 'RUNNING';
  }

  addExecutor(worker: WorkerInfo, cores: number, now: number, useId?: number): ExecutorDesc {
    const id = useId ?? this.nextExecutorId++;
    if (useId !== undefined) this.nextExecutorId = Math.max(this.nextExecutorId, useId + 1);
    const exec = new ExecutorDesc(id, this.id, worker, cores, this.desc.memoryPerExecutorMB, now);
    this.executors.set(id, exec);
    this.coresGranted += cores;
    return exec;
  }

  removeExecutor(exec: ExecutorDesc): void {
    if (this.executors.delete(exec.id)) {
      this.removedExecutors.push(exec);
      // A long-running application loses executors without end: keep the most recent ones.
      if (this.removedExecutors.length > MAX_REMOVED_EXECUTORS) {
        this.removedExecutors.splice(0, this.removedExecutors.length - MAX_REMOVED_EXECUTORS);
      }
      this.coresGranted -= exec.cores;
    }
  }

  /** An executor ended by itself with an error: `message` may quote the end of its stderr. */
  executorFailed(exec: ExecutorDesc, message: string, now: number): void {
    this.lastExecutorFailure = {
      execId: exec.id,
      workerHostPort: exec.worker.hostPort,
      time: now,
      message: withDriverHostHint(message).slice(0, 8192),
    };
  }

  summary(): AppSummary {
    const s: AppSummary = {
      id: this.id,
      name: this.desc.name,
      user: this.desc.user,
      coresGranted: this.coresGranted,
      memoryPerExecutorMB: this.desc.memoryPerExecutorMB,
      state: this.state,
      startTime: this.startTime,
      driver: this.driver.toData(),
      executors: [...this.executors.values()].map((e) => e.summary()),
      removedExecutors: this.removedExecutors.map((e) => e.summary()),
    };
    if (this.desc.maxCores !== undefined) s.maxCores = this.desc.maxCores;
    if (this.desc.coresPerExecutor !== undefined) s.coresPerExecutor = this.desc.coresPerExecutor;
    if (this.desc.resourceReqsPerExecutor?.length)
      s.resourceReqsPerExecutor = structuredClone(this.desc.resourceReqsPerExecutor);
    if (this.endTime !== undefined) s.endTime = this.endTime;
    if (this.failure) s.failure = structuredClone(this.failure);
    if (this.progress) s.progress = this.progress;
    // Only a worker, which holds the cluster secret, derives a key for a `driver-…` submission.
    if (this.submission?.startsWith('driver-')) s.driverId = this.submission;
    if (this.lastExecutorFailure) s.lastExecutorFailure = { ...this.lastExecutorFailure };
    if (this.waitingReason !== undefined && this.state === 'WAITING')
      s.waitingReason = this.waitingReason;
    return s;
  }
}
