import type { PeerConnection, RpcEndpointRef } from '../../rpc/index.js';
import type { ExecutorProgress } from './prefetch.js';

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

  get freeCores(): number {
    return this.free;
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

  /** A task was sent here: on a free core, or (`queued`) to a queue slot. */
  launched(taskId: number, queued: boolean): void {
    if (queued) this.queue++;
    else this.free--;
    this.tasks.add(taskId);
  }

  /**
   * A task reported its end at `now`: a queued one takes the core it held, else the core is free.
   * False when it held nothing here (it had ended already, or was never sent here).
   */
  ended(taskId: number, now: number): boolean {
    if (!this.tasks.delete(taskId)) return false;
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
