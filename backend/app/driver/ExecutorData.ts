import type { PeerConnection, RpcEndpointRef } from '../../rpc/index.js';
import type { ExecutorProgress } from './prefetch.js';
import type { TaskResourceSlots } from './TaskResourceSlots.js';

/**
 * What the driver knows of one registered executor (Spark's ExecutorData): its cores, and the
 * tasks of ours that hold them or wait there in its queue (prefetch). Only these methods change
 * it, so that a core or a queue slot is taken and given back in one place.
 */
export class ExecutorData implements ExecutorProgress {
  private free: number;
  private queue = 0;
  /** Tasks launched here that have not reported an end: each holds a core or a queue slot. */
  private readonly tasks = new Set<number>();
  /** Queued tasks asked back (KillTask ifNotStarted) that have not reported an end yet. */
  private readonly askedBack = new Set<number>();
  private lastHeard: number;

  constructor(
    readonly id: string,
    readonly ref: RpcEndpointRef,
    /** The RpcEnv address its connection comes from. */
    readonly address: string,
    readonly host: string,
    readonly cores: number,
    now: number,
    /** The connection it registered on: the only one its StatusUpdates count over. */
    readonly connection?: PeerConnection,
  ) {
    this.free = cores;
    this.lastHeard = now;
  }

  /** Its custom resources as its tasks take them (wick.task.resource.*); none asked: undefined. */
  taskResources: TaskResourceSlots | undefined;

  /** Free cores that a task can start on now: fewer when its tasks' resources are all taken. */
  get freeCores(): number {
    return this.taskResources ? Math.min(this.free, this.taskResources.available()) : this.free;
  }

  get queued(): number {
    return this.queue;
  }

  get heardAt(): number {
    return this.lastHeard;
  }

  get takingBack(): number {
    return this.askedBack.size;
  }

  /** Whether this task of ours runs or waits here. */
  holds(taskId: number): boolean {
    return this.tasks.has(taskId);
  }

  /**
   * The tasks that hold its cores now, as far as the driver can tell: the oldest launched that
   * have not ended, one per core (it runs its tasks in launch order; the rest wait in its queue).
   */
  onCores(): number[] {
    return [...this.tasks].slice(0, this.cores);
  }

  /** A task was sent here: on a free core, or (`queued`) to a queue slot. */
  launched(taskId: number, queued: boolean): void {
    if (queued) this.queue++;
    else {
      this.free--;
      this.taskResources?.assign(taskId);
    }
    this.tasks.add(taskId);
  }

  /**
   * A task reported its end at `now`: a queued one takes the core it held, else the core is free.
   * False when it held nothing here (it had ended already, or was never sent here).
   */
  ended(taskId: number, now: number): boolean {
    if (!this.tasks.delete(taskId)) return false;
    this.taskResources?.release(taskId);
    if (this.queue > 0) this.queue--;
    else this.free++;
    this.lastHeard = now;
    return true;
  }

  /**
   * Asks back its `count` last launched tasks (the last in its queue: an executor runs its tasks in
   * launch order); returns their ids, for the caller to send KillTask ifNotStarted.
   */
  askBack(count: number): number[] {
    const last = [...this.tasks].slice(-count);
    for (const taskId of last) this.askedBack.add(taskId);
    return last;
  }

  /** Whether this end answers a take-back (it is no longer awaited either way). */
  answeredAskBack(taskId: number): boolean {
    return this.askedBack.delete(taskId);
  }
}
