import { WorkerDecommissioning } from '../protocol/deploy.js';
import type { WireMessage } from '../protocol/registry.js';
import type { Clock, TimerHandle } from '../util/clock.js';
import { getLogger } from '../util/log.js';

/**
 * A worker's decommissioning (Spark 3.1's Worker.decommissionSelf): once started it takes no new
 * executors or drivers, tells the master (WorkerDecommissioning; the master tells the drivers of
 * its executors, which stop each once its running tasks end), and exits once nothing runs here,
 * or at wick.worker.decommission.forceKillTimeout after killing what still runs. Spark's worker
 * stays up, idle, until someone stops it; a Wick worker leaves by itself, since an operator who
 * decommissions a worker means to take its machine away.
 */

const log = getLogger('Worker');

export interface DecommissionHost {
  readonly clock: Clock;
  /** What still runs here: executors and drivers. */
  running(): number;
  killAll(): Promise<void>;
  /** To the master this worker follows. */
  tellMaster(message: WireMessage): void;
  /** The worker's page shows whether it is decommissioning. */
  changed(): void;
  exit(code: number, reason: string): void;
}

export class Decommission {
  private why: string | undefined;
  private deadline: TimerHandle | undefined;
  private exiting = false;

  constructor(
    private readonly workerId: string,
    private readonly forceKillTimeoutMs: number,
    private readonly host: DecommissionHost,
  ) {}

  get isDecommissioned(): boolean {
    return this.why !== undefined;
  }

  /** Why it decommissions (for its page and logs), once it does. */
  get reason(): string | undefined {
    return this.why;
  }

  /** Starts decommissioning (again: nothing more). */
  start(why: string): void {
    if (this.why !== undefined) return;
    this.why = why;
    const n = this.host.running();
    log.info(
      `Decommissioning this worker (${why}): ${n} executor(s) and driver(s) run here; exiting once they end, or in ${this.forceKillTimeoutMs / 1000} s (wick.worker.decommission.forceKillTimeout)`,
    );
    this.host.tellMaster(WorkerDecommissioning({ id: this.workerId }));
    this.host.changed();
    this.deadline = this.host.clock.setTimeout(() => {
      void this.forceExit();
    }, this.forceKillTimeoutMs);
    this.checkIdle();
  }

  /**
   * After registering anew, or answering a new master: that master does not know this worker is
   * leaving (a recovered master lists it ALIVE), so it is told again.
   */
  reannounce(): void {
    if (this.why !== undefined && !this.exiting) {
      this.host.tellMaster(WorkerDecommissioning({ id: this.workerId }));
    }
  }

  /** After anything here changed: exits once a decommissioning worker runs nothing. */
  checkIdle(): void {
    if (this.why === undefined || this.exiting || this.host.running() > 0) return;
    this.exiting = true;
    this.deadline?.cancel();
    // A turn later: the master hears what was sent this turn (the last executor's end) before
    // the connection drops.
    setImmediate(() => this.host.exit(0, `Decommissioned (${this.why}): nothing runs here`));
  }

  private async forceExit(): Promise<void> {
    if (this.exiting) return;
    this.exiting = true;
    log.warn(
      `Decommissioning: ${this.host.running()} executor(s) and driver(s) still run after ${this.forceKillTimeoutMs / 1000} s (wick.worker.decommission.forceKillTimeout); killing them`,
    );
    await this.host.killAll();
    setImmediate(() =>
      this.host.exit(0, `Decommissioned (${this.why}): killed what still ran at the timeout`),
    );
  }
}
