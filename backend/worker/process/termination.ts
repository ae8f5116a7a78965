import { getLogger } from '../../util/log.js';
import { killProcessTree, sweep } from './kill.js';
import type { Launched } from './launch.js';

const log = getLogger('Termination');

/**
 * How a runner's child ends, the part ExecutorRunner and DriverRunner share (as execa keeps
 * termination in lib/terminate/, apart from spawning and stdio): a kill takes the whole process
 * tree, an exit by itself sweeps what the child left running, and the final state is reported
 * once, only after the whole tree is gone. The root may exit on SIGTERM while its descendants are
 * still in their grace period: a KILLED reported then would let the master place a new executor
 * beside processes still holding the old one's resources.
 */
export class Termination {
  /** Resolves once the final state is reported. */
  readonly finished: Promise<void>;
  private resolveFinished!: () => void;
  private ended = false;
  private requested = false;
  /** The kill's sweep of the whole tree, once one started. */
  private killing: Promise<void> | undefined;

  constructor(
    /** What the log calls the child: `executor app-…/0`, `driver driver-…`. */
    private readonly name: string,
    /** SIGKILL what is left this long after SIGTERM. */
    private readonly graceMs: number,
  ) {
    this.finished = new Promise((r) => {
      this.resolveFinished = r;
    });
  }

  /** Whether kill() was called: the runner reports KILLED, and starts nothing more. */
  get killRequested(): boolean {
    return this.requested;
  }

  get isFinished(): boolean {
    return this.ended;
  }

  /**
   * Records the kill and, if `child` was started, kills its whole tree; resolves once the tree is
   * gone. A second call while a kill is under way waits for that one instead of signalling again.
   */
  async kill(child: Launched | undefined): Promise<void> {
    this.requested = true;
    if (!child || child.pid <= 0) return;
    if (!this.killing) {
      log.info(`Killing process tree of ${this.name} (pid ${child.pid})`);
      this.killing = killProcessTree(child.pid, child.marker, this.graceMs, false, undefined, {
        sandboxed: child.sandboxed,
      });
    }
    await this.killing;
  }

  /**
   * After `child`'s root exited: a killed child waits for its kill's sweep of the tree, any other
   * has what it left running (a daemon, an orphan) killed before its exit is reported. Resolves
   * with whether it was killed (as of its exit); never rejects.
   */
  async exited(child: Launched): Promise<boolean> {
    const killed = this.requested;
    if (killed) await this.treeGone();
    else await sweep(child, this.graceMs);
    return killed;
  }

  /** Resolves once a kill's sweep of the tree is over (at once without one); never rejects. */
  async treeGone(): Promise<void> {
    await this.killing?.catch(() => undefined);
  }

  /**
   * Reports the final state through `report`, the first time only; later calls do nothing and
   * return false.
   */
  finish(report: () => void): boolean {
    if (this.ended) return false;
    this.ended = true;
    try {
      report();
    } finally {
      this.resolveFinished();
    }
    return true;
  }
}
