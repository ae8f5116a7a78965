import { withDriverHostHint } from '../../shared/executorFailure.js';

/**
 * The driver's warning for an executor that exited before it registered: the master's message
 * (which quotes the end of the executor's stderr), with the wick.driver.host hint when it could
 * not connect.
 */
export function explainUnregisteredExit(executorId: string, message: string): string {
  return `Executor ${executorId} exited before registering with the driver: ${withDriverHostHint(message)}`;
}

/**
 * Says each different reason once, in full: the master relaunches executors that fail, and the
 * same stderr quoted for each would bury everything else the driver logs.
 */
export class UnregisteredExits {
  private lastReason: string | undefined;
  private lastExecutor = '';

  /** The warning to log, or a one-line note when the reason is the one just quoted. */
  explain(executorId: string, message: string): { level: 'warn' | 'info'; text: string } {
    // Numbers (ports, pids, times, ids) differ from one relaunch to the next; the reason does not.
    const reason = message.replace(/\d+/g, '#');
    if (reason === this.lastReason) {
      return {
        level: 'info',
        text: `Executor ${executorId} exited before registering with the driver, as executor ${this.lastExecutor} did`,
      };
    }
    this.lastReason = reason;
    this.lastExecutor = executorId;
    return { level: 'warn', text: explainUnregisteredExit(executorId, message) };
  }
}
