import type { Logger } from '../../util/log.js';
import { UnregisteredExits } from './executorFailure.js';
import type { LostTask } from './scheduler/TaskScheduler.js';

/** The tasks that held a lost executor's cores, and how many it had. */
export interface LostHolding {
  tasks: LostTask[];
  cores: number;
}

/**
 * The DriverEndpoint's bookkeeping of executors between the master's word and their own: those
 * granted that have not registered yet, and those whose connection dropped before the master
 * said how they ended. The endpoint decides what a loss means for tasks; this remembers what it
 * needs to, until it does.
 */
export class ExecutorLoss {
  /**
   * Executors the master has granted that have not registered yet. While there are any, no task
   * is queued ahead on the others: a short job would otherwise be queued whole on the first
   * executor to register, leaving the one still starting with nothing to do.
   */
  private readonly starting = new Set<string>();
  private readonly unregisteredExits = new UnregisteredExits();
  /**
   * Executors whose connection dropped before the master said how they ended: the tasks that held
   * their cores, which fail after the fact if the end shows that they killed it (out of memory).
   */
  private readonly lostUnexplained = new Map<string, LostHolding>();

  constructor(private readonly log: Logger) {}

  /** The master granted this executor, which has not registered. */
  granted(executorId: string): void {
    this.starting.add(executorId);
  }

  registered(executorId: string): void {
    this.starting.delete(executorId);
  }

  /** Whether a granted executor has not registered yet. */
  get anyStarting(): boolean {
    return this.starting.size > 0;
  }

  /**
   * An executor ended: true if it had never registered. The user's job waits on executors that
   * cannot start, so one that failed says why (not while the application stops).
   */
  endedStarting(
    executorId: string,
    reason: string,
    exitStatus: number | undefined,
    stopping: boolean,
  ): boolean {
    if (!this.starting.delete(executorId)) return false;
    if (!stopping && exitStatus !== undefined && exitStatus !== 0) {
      const { level, text } = this.unregisteredExits.explain(executorId, reason);
      this.log[level](text);
    }
    return true;
  }

  /** A registered executor's connection dropped while tasks held its cores: wait for its end. */
  awaitEnd(executorId: string, holding: LostHolding): void {
    this.lostUnexplained.set(executorId, holding);
  }

  /**
   * The master's word (`exitStatus` set) on an executor whose connection dropped first: what its
   * cores held, once; nothing for any other.
   */
  takeHolding(executorId: string, exitStatus: number | undefined): LostHolding | undefined {
    if (exitStatus === undefined) return undefined;
    const holding = this.lostUnexplained.get(executorId);
    this.lostUnexplained.delete(executorId);
    return holding;
  }
}
