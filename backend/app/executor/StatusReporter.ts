import type { TaskError, TaskMetrics } from '../../protocol/task.js';

export interface TaskReport {
  taskId: number;
  state: 'RUNNING' | 'FINISHED' | 'FAILED' | 'KILLED';
  result?: unknown;
  error?: TaskError;
  durationMs?: number;
  metrics?: TaskMetrics;
}

/** How the reporter waits; tests pass their own so that nothing sleeps. */
export interface ReportTimers {
  /** Runs fn once the current turn of the event loop's other events are handled. */
  soon(fn: () => void): void;
  /** Runs fn after ms; the returned function cancels it. */
  after(fn: () => void, ms: number): () => void;
}

export const nodeTimers: ReportTimers = {
  soon: (fn) => void setImmediate(fn),
  after: (fn, ms) => {
    const t = setTimeout(fn, ms);
    return () => clearTimeout(t);
  },
};

/**
 * The longest a report waits for others: a RUNNING report always may (the driver acts on ends
 * alone), an end while its executor has at least twice that much work queued (tasks that have not
 * started). The driver refills an executor's queue from the ends it hears of, so that ends held no
 * longer than the queue lasts never leave a core without a task.
 */
export const REPORT_HOLD_MS = 50;

/**
 * Sends an executor's task status reports to the driver and writes their log lines, several per
 * write. Each write costs both processes a wake-up and a system call or two, which is as much CPU
 * as the darts of a 0.1 ms task: a job of millisecond tasks reported one write per task spends a
 * tenth of its CPU on reporting.
 *
 * So while the executor has enough work queued to keep it busy until a refill could arrive
 * (`queuedMs` ≥ 2 × REPORT_HOLD_MS), the driver needs no news, and reports wait up to
 * REPORT_HOLD_MS to go out together; so do RUNNING reports alone, which the driver does not act
 * on (a batch's first task is announced as the batch starts, a write of its own otherwise). With
 * less queued, an end and what is held with it go out at the end of the current turn: the driver
 * hears in time to refill the queue, a core about to be free is known at once, and the last tasks
 * of a job are never held up. Tasks of microseconds are never held.
 * Order is kept. A report is never lost: flush() sends what is held (StopExecutor, stop()); only a
 * RUNNING report sent in the same write as its task's end is left out, as the end says more.
 */
export class StatusReporter {
  private reports: TaskReport[] = [];
  private lines = '';
  private soonQueued = false;
  private cancelHold: (() => void) | undefined;
  private readonly flushSoon = () => {
    this.soonQueued = false;
    this.flush();
  };
  private readonly flushHeld = () => {
    this.cancelHold = undefined;
    this.flush();
  };

  constructor(
    private readonly send: (r: TaskReport) => void,
    /** How long the tasks launched on the executor that have not started will take (estimated). */
    private readonly queuedMs: () => number,
    /** Writes log lines (stdout). */
    private readonly write: (text: string) => void,
    private readonly timers: ReportTimers = nodeTimers,
    /**
     * Puts what `send` has queued on the wire now (the RpcEnv otherwise writes at the end of the
     * turn), so that the reports go out before their log lines are written: the driver waits for
     * the reports, nobody for the lines.
     */
    private readonly sent: () => void = () => {},
  ) {}

  /** Queues a report, and `line` (a whole line, newline included) for the log. */
  report(r: TaskReport, line = ''): void {
    this.reports.push(r);
    this.lines += line;
    if (this.soonQueued) return;
    if (r.state !== 'RUNNING' && this.queuedMs() < 2 * REPORT_HOLD_MS) {
      this.sendSoon();
    } else if (!this.cancelHold) {
      this.cancelHold = this.timers.after(this.flushHeld, REPORT_HOLD_MS);
    }
  }

  /** Sends what is held at the end of the current turn, however much work is queued. */
  sendSoon(): void {
    if (this.soonQueued) return;
    this.cancelHold?.();
    this.cancelHold = undefined;
    this.soonQueued = true;
    this.timers.soon(this.flushSoon);
  }

  /** Sends every report held and writes their lines, now. */
  readonly flush = (): void => {
    this.cancelHold?.();
    this.cancelHold = undefined;
    const reports = this.reports;
    this.reports = [];
    // RUNNING is news only until the task's end is: one whose end goes in the same write is
    // left out (the driver acts on ends alone). Its log line stays.
    const ended = new Set<number>();
    for (const r of reports) if (r.state !== 'RUNNING') ended.add(r.taskId);
    for (const r of reports) {
      if (r.state === 'RUNNING' && ended.has(r.taskId)) continue;
      try {
        this.send(r);
      } catch {
        // The executor is stopping (its RpcEnv refuses sends): nobody waits for these any more.
      }
    }
    if (reports.length > 0) {
      try {
        this.sent();
      } catch {
        // As a send that throws: the executor is stopping.
      }
    }
    this.writeLines();
  };

  /** Writes the log lines held (the process is exiting: reports can no longer be sent). */
  readonly writeLines = (): void => {
    if (this.lines === '') return;
    const text = this.lines;
    this.lines = '';
    this.write(text);
  };
}
