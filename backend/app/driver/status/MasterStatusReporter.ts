/**
 * Forwards the driver's listener events to its master (ReportListenerEvents), so that the master's
 * /api/v1 and the pages it pushes show the application's jobs, stages and tasks without anyone
 * reaching the driver's machine.
 *
 * Never in the way of tasks: an event is queued in the bus's delivery (an array push, or adding to
 * a few counters) and sent later, from a timer, one report in flight at a time. Bounded on every
 * side: up to REPORTED_TASKS_PER_SECOND tasks a second are reported one by one (their start and
 * end both, so that the master's task rows are whole); the other tasks' starts and ends are
 * coalesced per stage attempt and executor into counts and sums (statusReport.ts), which keep the
 * master's numbers exact. A report holds at most MAX_REPORT_EVENTS events, and no more than half
 * of what the master takes a second is sent in a second. A report the master refuses for its rate
 * (RateLimited: another sender for this application, or a master that counts its second from
 * elsewhere) is kept and sent again once the master says; one refused for any other bound is
 * gone. Past MAX_PENDING events waiting (a master that does not answer), further events other
 * than tasks are dropped, and that is logged once.
 */
import { RpcError, RpcErrorCode } from '../../../protocol/errors.js';
import type { WickListenerEvent, WickListenerTaskEnd } from '../../../protocol/listener.js';
import {
  MAX_REPORT_COALESCED,
  MAX_REPORT_EVENTS,
  MAX_REPORTED_EVENTS_PER_SECOND,
  REPORTED_TASKS_PER_SECOND,
  type TaskEndsCoalesced,
} from '../../../protocol/statusReport.js';
import { getLogger } from '../../../util/log.js';
import type { LiveListenerBus } from '../LiveListenerBus.js';

const log = getLogger('MasterStatusReporter');

/** Events waiting to be sent, at most. */
export const MAX_PENDING = 50_000;
const SENT_PER_SECOND = MAX_REPORTED_EVENTS_PER_SECOND / 2;
/** The longest a RateLimited answer holds the next report back, whatever it says. */
const MAX_RETRY_AFTER_MS = 5000;

export type SendReport = (
  events: WickListenerEvent[],
  coalesced: TaskEndsCoalesced[],
) => Promise<void>;

export interface ReporterOptions {
  intervalMs?: number;
  tasksPerSecond?: number;
  now?: () => number;
}

export class MasterStatusReporter {
  private pending: WickListenerEvent[] = [];
  private coalesced = new Map<string, TaskEndsCoalesced>();
  /** Tasks whose start was reported one by one: their end is too. */
  private readonly detailed = new Set<number>();
  private detailedThisWindow = 0;
  private sentThisWindow = 0;
  private windowStart: number;
  /** No report goes before this (a RateLimited answer's retryAfterMs). */
  private notBefore = 0;
  private inFlight: Promise<void> | undefined;
  private dropped = 0;
  private refusals = 0;
  private readonly off: () => void;
  private readonly timer: NodeJS.Timeout;
  private readonly tasksPerSecond: number;
  private readonly now: () => number;

  constructor(
    bus: LiveListenerBus,
    private readonly send: SendReport,
    options: ReporterOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    this.tasksPerSecond = options.tasksPerSecond ?? REPORTED_TASKS_PER_SECOND;
    this.windowStart = this.now();
    this.off = bus.onEvent((e) => this.onEvent(e));
    this.timer = setInterval(() => this.flush(), options.intervalMs ?? 250);
    this.timer.unref();
  }

  /** Events and coalesced entries waiting (tests). */
  get backlog(): { events: number; coalesced: number; dropped: number } {
    return { events: this.pending.length, coalesced: this.coalesced.size, dropped: this.dropped };
  }

  /** Sends what is waiting (one report at a time; more follow while the window allows). */
  flush(): Promise<void> {
    if (this.inFlight) return this.inFlight;
    const now = this.now();
    if (now - this.windowStart >= 1000) {
      this.windowStart = now;
      this.detailedThisWindow = 0;
      this.sentThisWindow = 0;
    }
    if (this.pending.length === 0 && this.coalesced.size === 0) return Promise.resolve();
    if (now < this.notBefore) return Promise.resolve();
    const room = Math.min(MAX_REPORT_EVENTS, SENT_PER_SECOND - this.sentThisWindow);
    if (room <= 0) return Promise.resolve();
    const events = this.pending.length <= room ? this.pending : this.pending.slice(0, room);
    this.pending = events === this.pending ? [] : this.pending.slice(room);
    const coalesced: TaskEndsCoalesced[] = [];
    // Counts go with or after the events they follow (a stage's submission first), never before.
    if (this.pending.length === 0)
      for (const [k, c] of this.coalesced) {
        if (coalesced.length >= Math.min(MAX_REPORT_COALESCED, room)) break;
        coalesced.push(c);
        this.coalesced.delete(k);
      }
    this.sentThisWindow += events.length + coalesced.length;
    this.inFlight = this.send(events, coalesced)
      .catch((err: Error) => {
        if (err instanceof RpcError && err.code === RpcErrorCode.RateLimited) {
          this.sendAgain(events, coalesced, err.data);
          return;
        }
        // Refused (a bound) or lost (the master changed): these events are gone; the next go on.
        if (this.refusals++ === 0)
          log.warn(`The master did not take a status report: ${err.message}`);
      })
      .finally(() => {
        this.inFlight = undefined;
      });
    return this.inFlight;
  }

  /**
   * Stops listening and sends what is left, for at most `timeoutMs`: a master that does not
   * answer (gone, or changing) never holds up the driver's stop for longer.
   */
  async stop(timeoutMs = 5000): Promise<void> {
    this.off();
    clearInterval(this.timer);
    let timer: NodeJS.Timeout | undefined;
    let over = false;
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        over = true;
        resolve();
      }, timeoutMs);
    });
    const drain = async () => {
      while (!over && (this.pending.length > 0 || this.coalesced.size > 0 || this.inFlight)) {
        await this.flush();
        // Nothing could go (this second's share is sent): wait for the next.
        const left = this.pending.length > 0 || this.coalesced.size > 0;
        if (left && !this.inFlight && !over) await new Promise((r) => setTimeout(r, 50));
      }
    };
    await Promise.race([drain(), deadline]);
    over = true;
    clearTimeout(timer);
  }

  /** Puts a report the master will take later back in front of what waits, counts merged. */
  private sendAgain(
    events: WickListenerEvent[],
    coalesced: TaskEndsCoalesced[],
    data: unknown,
  ): void {
    this.pending = events.concat(this.pending);
    for (const c of coalesced) {
      const key = `${c.stageId}/${c.stageAttemptId}/${c.executorId}`;
      const newer = this.coalesced.get(key);
      this.coalesced.delete(key);
      this.coalesced.set(key, newer ? sumOf(c, newer) : { ...c });
    }
    const asked = (data as { retryAfterMs?: unknown } | undefined)?.retryAfterMs;
    const wait =
      typeof asked === 'number' && asked >= 0 ? Math.min(asked, MAX_RETRY_AFTER_MS) : 1000;
    this.notBefore = this.now() + wait;
  }

  private onEvent(e: WickListenerEvent): void {
    if (e.event === 'WickListenerTaskStart') {
      if (this.detailedThisWindow < this.tasksPerSecond && this.pending.length < MAX_PENDING) {
        this.detailedThisWindow++;
        this.detailed.add(e.taskId);
        this.pending.push(e);
        return;
      }
      this.entry(e.stageId, e.stageAttemptId, e.executorId).started++;
      return;
    }
    if (e.event === 'WickListenerTaskEnd') {
      if (this.detailed.delete(e.taskId) || e.stageId === undefined) {
        this.pending.push(e);
        return;
      }
      this.coalesceEnd(e);
      return;
    }
    if (this.pending.length >= MAX_PENDING) {
      if (this.dropped++ === 0)
        log.warn(
          `More than ${MAX_PENDING} events wait for the master: the master's view of this application misses some from here on`,
        );
      return;
    }
    this.pending.push(e);
  }

  private coalesceEnd(e: WickListenerTaskEnd): void {
    const c = this.entry(e.stageId ?? 0, e.stageAttemptId ?? 0, e.executorId);
    if (e.state === 'FINISHED') c.finished++;
    else if (e.state === 'KILLED') c.killed++;
    else {
      c.failed++;
      if (e.error !== undefined) c.lastError = e.error;
    }
    c.executorRunTimeMs += Math.round(e.durationMs ?? 0);
    const m = e.metrics;
    if (!m) return;
    if (m.shuffleRead) {
      c.shuffleReadBytes += m.shuffleRead.localBytesRead + m.shuffleRead.remoteBytesRead;
      c.shuffleReadRecords += m.shuffleRead.recordsRead;
    }
    if (m.shuffleWrite) {
      c.shuffleWriteBytes += m.shuffleWrite.bytesWritten;
      c.shuffleWriteRecords += m.shuffleWrite.recordsWritten;
    }
    c.memoryBytesSpilled += m.memoryBytesSpilled ?? 0;
    c.diskBytesSpilled += m.diskBytesSpilled ?? 0;
  }

  private entry(stageId: number, stageAttemptId: number, executorId: string): TaskEndsCoalesced {
    const key = `${stageId}/${stageAttemptId}/${executorId}`;
    let c = this.coalesced.get(key);
    if (!c) {
      c = {
        stageId,
        stageAttemptId,
        executorId,
        started: 0,
        finished: 0,
        failed: 0,
        killed: 0,
        executorRunTimeMs: 0,
        shuffleReadBytes: 0,
        shuffleReadRecords: 0,
        shuffleWriteBytes: 0,
        shuffleWriteRecords: 0,
        memoryBytesSpilled: 0,
        diskBytesSpilled: 0,
      };
      this.coalesced.set(key, c);
    }
    return c;
  }
}

/** Two entries of one stage attempt and executor as one: `later`'s error is the last. */
function sumOf(earlier: TaskEndsCoalesced, later: TaskEndsCoalesced): TaskEndsCoalesced {
  const sum = { ...later };
  for (const k of SUMMED) sum[k] = earlier[k] + later[k];
  if (sum.lastError === undefined && earlier.lastError !== undefined)
    sum.lastError = earlier.lastError;
  return sum;
}

const SUMMED = [
  'started',
  'finished',
  'failed',
  'killed',
  'executorRunTimeMs',
  'shuffleReadBytes',
  'shuffleReadRecords',
  'shuffleWriteBytes',
  'shuffleWriteRecords',
  'memoryBytesSpilled',
  'diskBytesSpilled',
] as const satisfies readonly (keyof TaskEndsCoalesced)[];
