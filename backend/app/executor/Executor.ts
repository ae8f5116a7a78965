// Over 400 lines on purpose: the batch state machine and the thread protocol it drives share
// one hot path (every task passes here), which stays one class so that no call goes through an
// indirection per task; its parts are the sections below.
import { availableParallelism } from 'node:os';
import { BroadcastChannel } from 'node:worker_threads';
import type { TaskDescription, TaskError } from '../../protocol/task.js';
import { OUT_OF_MEMORY_ERROR, outOfMemoryReason } from '../../shared/outOfMemory.js';
import type { TaskPlace } from '../task/compile.js';
import {
  AVAILABLE,
  BATCH_STOPPED,
  type BatchAdd,
  type BatchOutcome,
  type BatchReport,
  CLAIMED,
  CONTROL_LENGTH,
  ENDED,
  RECEIVED,
} from '../task/taskWorker.js';
import { StatusReporter, type TaskReport } from './StatusReporter.js';
import { type TaskPool, takeTaskPool } from './taskPool.js';

/** The most tasks a new batch starts with (see Executor). */
const MAX_BATCH = 64;
/** Weight of the newest duration in the running average of tasks' durations. */
const DURATION_EWMA_WEIGHT = 0.2;
/** The last batch number given, in this process (in-process executors share it). */
let lastBatch = 0;

/** A task handed to a pool thread in a batch, and not ended yet. */
interface Handed {
  task: TaskDescription;
  batch: Batch;
  /** Its place in the batch. */
  index: number;
  /** Why it was killed: should its outcome be lost with its thread, it ends KILLED. */
  killReason?: string;
}

/** Tasks handed to one pool thread together (one piscina run), and those added to it since. */
interface Batch {
  /** Its number, which its adds and its thread's reports carry (TaskBatchRequest). */
  seq: number;
  tasks: TaskDescription[];
  abort: TaskAbort;
  /** Shared with the thread: tasks handed over, claimed and ended, and the flags (taskWorker). */
  control: Int32Array;
  /** Outcomes received: tasks[0, received) have ended. */
  received: number;
  /** Tasks from here on were taken back (BATCH_STOPPED) and will not run in this batch. */
  limit: number;
  takenBack: boolean;
  /** Tasks up to here (exclusive) have been reported RUNNING. */
  announced: number;
}

/**
 * Runs tasks on a pool of worker threads, one per core (piscina), so that an executor with N
 * cores really runs N tasks at once: each thread runs one task at a time, and at most `cores` run
 * at once, as in Spark. Tasks launched beyond the cores wait here in launch order: the driver
 * sends a few more than the cores when tasks are short (DriverEndpoint's prefetch), so that the
 * next task is already here when a core frees up.
 *
 * A free thread gets every task waiting (up to MAX_BATCH, shared between free threads) in one
 * batch, which it runs one after another, posting outcomes a few at a time (OUTCOME_HOLD_MS): a
 * task of a few microseconds then costs a fraction of a message between threads instead of a round
 * trip. Tasks launched while a thread runs a batch are added to it (to the batch with the fewest
 * tasks not started, when there are several), so that a thread kept busy by the driver's prefetch
 * goes from task to task without waiting for us: ending a batch and starting the next costs a task
 * thread milliseconds on a machine whose cores all run tasks, which SparkPi's threads spent idle
 * (bench/pi). A thread that finds no task left closes its
 * batch; those launched after that start a new one.
 *
 * A task is RUNNING (reported, and logged) once we learn its thread has started it, and FINISHED
 * when its outcome comes, as if it had been handed over alone. Killing a task a thread has not
 * started takes it and the rest of its batch back (they wait here again); killing the one running
 * ends its thread, as piscina's abort does: the batch's tasks after it wait here again, and so do
 * those that had ended but whose outcomes the thread still held (they run again, as Spark reruns
 * tasks whose results are lost), unless they were killed too.
 *
 * Writes a line per task start and end to stdout and each failure to stderr: those files are what
 * users read.
 */
export class Executor {
  /** Launched tasks not handed to a thread yet, oldest first. */
  private waiting: TaskDescription[] = [];
  private waitingHead = 0;
  private readonly handed = new Map<number, Handed>();
  private readonly batches = new Set<Batch>();
  /** The batches running, by number: where their threads' reports go. */
  private readonly bySeq = new Map<number, Batch>();
  /** Where tasks added to running batches go out (TaskBatchRequest). */
  private readonly adds: BroadcastChannel;
  private readonly onThreadMessage = (m: unknown) => this.onReport(m as BatchReport);
  private stopped = false;
  private dispatchQueued = false;
  private readonly dispatchNow = () => {
    this.dispatchQueued = false;
    this.dispatch();
  };
  private readonly reporter: StatusReporter;
  /** Running average of the tasks' durations (ms), for how long the tasks queued will take. */
  private taskMs = 0;

  constructor(
    readonly executorId: string,
    readonly cores: number,
    private readonly place: TaskPlace,
    send: (r: TaskReport) => void,
    /** Where the task start and end lines go (stdout). */
    writeLog: (text: string) => void = (text) => process.stdout.write(text),
    /** Its memory in MiB (wick.executor.memory), which its threads' heaps share. */
    private readonly memoryMB?: number,
    /** Its threads, started ahead or now. */
    private readonly pool: TaskPool = takeTaskPool(cores, memoryMB),
    /** Puts the reports `send` queued on the wire now (see StatusReporter). */
    sent?: () => void,
  ) {
    this.reporter = new StatusReporter(
      send,
      () => this.backlog() * this.taskMs,
      writeLog,
      undefined,
      sent,
    );
    process.on('exit', this.reporter.writeLines);
    this.adds = new BroadcastChannel(pool.addsChannel);
    this.adds.unref();
    pool.on('message', this.onThreadMessage);
    if (cores > availableParallelism()) {
      process.stderr.write(
        `Executor ${executorId}: ${cores} cores asked, this machine has ${availableParallelism()}\n`,
      );
    }
  }

  launchTask(task: TaskDescription): void {
    if (this.stopped) return;
    this.waiting.push(task);
    // The tasks of one LaunchTask write arrive together: hand them over together, once all are
    // here (after this tick's other messages), rather than the first alone.
    if (!this.dispatchQueued) {
      this.dispatchQueued = true;
      process.nextTick(this.dispatchNow);
    }
  }

  /**
   * Ends a task: a queued one leaves the queue, a running one ends with its thread. With
   * `ifNotStarted`, only a queued one does, and a started one runs on to its usual end: the
   * driver takes queued tasks back so that another executor runs them (DriverEndpoint), and hears
   * of what it took back at the end of this turn (several KillTasks come together) rather than
   * with the next reports.
   */
  killTask(taskId: number, reason: string, ifNotStarted = false): void {
    const taken = this.takeTask(taskId, reason, ifNotStarted);
    if (taken && ifNotStarted) this.reporter.sendSoon();
  }

  /** killTask's work; true when the task ended KILLED before it started. */
  private takeTask(taskId: number, reason: string, ifNotStarted: boolean): boolean {
    for (let i = this.waitingHead; i < this.waiting.length; i++) {
      const task = this.waiting[i] as TaskDescription;
      if (task.taskId !== taskId) continue;
      // Not handed to a thread: it leaves the queue and ends KILLED, as an aborted pool task does.
      this.waiting.splice(i, 1);
      this.reportKilledBeforeStart(task, reason);
      return true;
    }
    const h = this.handed.get(taskId);
    if (!h) return false;
    const b = h.batch;
    this.takeBack(b);
    if (h.index >= b.limit) {
      // Not started: takeBack put it back in the queue, which it leaves KILLED.
      const i = this.waiting.indexOf(h.task, this.waitingHead);
      if (i >= 0) this.waiting.splice(i, 1);
      this.reportKilledBeforeStart(h.task, reason);
      this.dispatch();
      return true;
    }
    // Started: the batch's tasks after it wait here again (takeBack) and go to a new batch.
    if (ifNotStarted) return false;
    h.killReason = reason;
    // It has ended: the thread, stopped now, posts its outcome (if it has not yet) as it leaves
    // the batch.
    if (h.index < Atomics.load(b.control, ENDED)) return false;
    // It is running: end its thread (piscina's abort); the run's rejection reports it KILLED.
    b.abort.abort(new Error(reason));
    return false;
  }

  /** Sends the status reports held now (before the RpcEnv stops). */
  flushReports(): void {
    this.reporter.flush();
  }

  async stop(): Promise<void> {
    this.flushReports();
    this.stopped = true;
    this.waiting = [];
    this.waitingHead = 0;
    for (const b of this.batches) {
      Atomics.or(b.control, CLAIMED, BATCH_STOPPED);
      b.abort.abort(new Error('executor stopped'));
    }
    await this.pool.destroy();
    this.pool.off('message', this.onThreadMessage);
    this.adds.close();
    process.off('exit', this.reporter.writeLines);
  }

  /**
   * Reports a task's state, with its line for stdout, several per write (StatusReporter). An
   * executor ended by a signal loses the reports held, as a killed one loses its own: the driver
   * runs the tasks it never heard the end of again elsewhere.
   */
  private report(r: TaskReport, line?: string): void {
    this.reporter.report(r, line);
  }

  /** Launched tasks that have not started: waiting here, or handed to a thread not at them yet. */
  private backlog(): number {
    let n = this.waiting.length - this.waitingHead;
    for (const b of this.batches) n += Math.max(0, b.limit - b.announced);
    return n;
  }

  /** Hands waiting tasks to free threads, and adds the rest to the batches running. */
  private dispatch(): void {
    while (!this.stopped && this.batches.size < this.cores) {
      const count = this.waiting.length - this.waitingHead;
      if (count === 0) return;
      const freeThreads = this.cores - this.batches.size;
      this.runBatch(this.takeWaiting(Math.min(MAX_BATCH, Math.ceil(count / freeThreads))));
    }
    // A batch its thread has not received yet takes no adds: the thread may be starting still, and
    // its adds channel not open (taskWorker.ts).
    const open = [...this.batches].filter(
      (b) => !b.takenBack && Atomics.load(b.control, RECEIVED) === 1,
    );
    if (this.stopped || this.waiting.length === this.waitingHead || open.length === 0) return;
    const tasks = this.takeWaiting(this.waiting.length - this.waitingHead);
    // Each task to the batch with the fewest not started.
    const backlog = open.map(
      (b) => b.tasks.length - (Atomics.load(b.control, CLAIMED) & ~BATCH_STOPPED),
    );
    const adds = open.map((): TaskDescription[] => []);
    for (const task of tasks) {
      let k = 0;
      for (let j = 1; j < open.length; j++)
        if ((backlog[j] as number) < (backlog[k] as number)) k = j;
      (adds[k] as TaskDescription[]).push(task);
      backlog[k] = (backlog[k] as number) + 1;
    }
    const refused = new Set<TaskDescription>();
    for (const [j, b] of open.entries()) {
      const add = adds[j] as TaskDescription[];
      if (!this.add(b, add)) for (const task of add) refused.add(task);
    }
    // They wait here again, in launch order, for the batch that follows.
    if (refused.size > 0) {
      this.waiting = [
        ...tasks.filter((t) => refused.has(t)),
        ...this.waiting.slice(this.waitingHead),
      ];
      this.waitingHead = 0;
    }
  }

  /** The oldest `n` waiting tasks, which leave the queue. */
  private takeWaiting(n: number): TaskDescription[] {
    const tasks = this.waiting.slice(this.waitingHead, this.waitingHead + n);
    this.waitingHead += n;
    if (this.waitingHead === this.waiting.length) {
      this.waiting = [];
      this.waitingHead = 0;
    }
    return tasks;
  }

  /**
   * Adds tasks to a running batch (see TaskBatchRequest): they go on the adds channel, then their
   * number on control[AVAILABLE]. False when the thread had closed the batch: they are not its
   * (and the thread, finding them on the channel later, leaves them).
   */
  private add(b: Batch, tasks: TaskDescription[]): boolean {
    if (tasks.length === 0) return true;
    const n = b.tasks.length;
    this.adds.postMessage({ batch: b.seq, tasks } satisfies BatchAdd);
    if (Atomics.compareExchange(b.control, AVAILABLE, n, n + tasks.length) !== n) return false;
    for (const [i, task] of tasks.entries()) {
      this.handed.set(task.taskId, { task, batch: b, index: n + i });
      b.tasks.push(task);
    }
    b.limit = b.tasks.length;
    return true;
  }

  private runBatch(tasks: TaskDescription[]): void {
    const control = new Int32Array(new SharedArrayBuffer(4 * CONTROL_LENGTH));
    control[AVAILABLE] = tasks.length;
    const b: Batch = {
      seq: ++lastBatch,
      tasks,
      abort: new TaskAbort(),
      control,
      received: 0,
      limit: tasks.length,
      takenBack: false,
      announced: 0,
    };
    this.batches.add(b);
    this.bySeq.set(b.seq, b);
    for (const [index, task] of tasks.entries())
      this.handed.set(task.taskId, { task, batch: b, index });
    this.announce(b, 1);
    // It ends with its thread's last report (onReport), which may come before or after the run
    // resolves (another port); only a run that fails ends it here: its thread was lost.
    this.pool
      .run(
        { place: this.place, batch: b.seq, tasks, control },
        { name: 'runBatch', signal: b.abort },
      )
      .catch((err: Error) => this.batchEnded(b, err));
  }

  /** A report of a batch's thread; one of a batch already ended (its thread lost) is late. */
  private onReport(r: BatchReport): void {
    const b = typeof r?.wickBatch === 'number' ? this.bySeq.get(r.wickBatch) : undefined;
    if (!b) return;
    this.onOutcomes(b, r.outcomes);
    if (r.ran !== undefined) this.batchEnded(b, undefined);
  }

  /** Reports RUNNING for the batch's tasks before `upTo` that have not been yet. */
  private announce(b: Batch, upTo: number): void {
    while (b.announced < Math.min(upTo, b.limit)) {
      // Counted before it is reported, so that the backlog the report sees no longer holds it.
      const task = b.tasks[b.announced++] as TaskDescription;
      if (!this.handed.has(task.taskId)) continue;
      this.report(
        { taskId: task.taskId, state: 'RUNNING' },
        `${stamp()} INFO Executor: Running ${taskName(task)}\n`,
      );
    }
  }

  private onOutcome(b: Batch, m: BatchOutcome): void {
    const task = b.tasks[m.index] as TaskDescription;
    b.received = m.index + 1;
    if (!this.handed.has(task.taskId)) return;
    // Outcomes come a few at a time: a task may end before we have seen it start.
    this.announce(b, m.index + 1);
    this.handed.delete(task.taskId);
    const durationMs = m.durationMs;
    this.taskMs += DURATION_EWMA_WEIGHT * (durationMs - this.taskMs);
    const name = taskName(task);
    const metrics = m.outcome.metrics ? { metrics: m.outcome.metrics } : {};
    if (m.outcome.ok) {
      this.report(
        {
          taskId: task.taskId,
          state: 'FINISHED',
          result: m.outcome.result,
          durationMs,
          ...metrics,
        },
        `${stamp()} INFO Executor: Finished ${name} in ${durationMs.toFixed(0)} ms\n`,
      );
    } else {
      const e = m.outcome.error;
      process.stderr.write(
        `${stamp()} ERROR Executor: Exception in ${name}\n${e.stack ?? e.message}\n`,
      );
      this.report({ taskId: task.taskId, state: 'FAILED', error: e, durationMs, ...metrics });
    }
  }

  private onOutcomes(b: Batch, outcomes: BatchOutcome[]): void {
    for (const m of outcomes) this.onOutcome(b, m);
    // The thread goes straight on to the next tasks it can claim.
    this.announce(b, Atomics.load(b.control, CLAIMED) & ~BATCH_STOPPED);
  }

  /** Stops the batch's thread from starting more of it; those tasks wait here again, in order. */
  private takeBack(b: Batch): void {
    if (b.takenBack) return;
    b.takenBack = true;
    const claimed = Atomics.or(b.control, CLAIMED, BATCH_STOPPED) & ~BATCH_STOPPED;
    b.limit = claimed;
    const back: TaskDescription[] = [];
    for (const task of b.tasks.slice(claimed)) {
      if (this.handed.delete(task.taskId)) back.push(task);
    }
    if (back.length > 0) {
      this.waiting = [...back, ...this.waiting.slice(this.waitingHead)];
      this.waitingHead = 0;
    }
  }

  private batchEnded(b: Batch, err: Error | undefined): void {
    if (!this.bySeq.delete(b.seq)) return;
    Atomics.or(b.control, CLAIMED, BATCH_STOPPED);
    this.batches.delete(b);
    if (err) {
      // The task that was running when the thread ended, if any, ends with it; the batch's
      // tasks it had not started wait here again, and so do those that had ended but whose
      // outcomes we have not received (lost with the thread, or posted but not here yet: those
      // reports come late and are left).
      this.takeBack(b);
      const ended = Math.min(Atomics.load(b.control, ENDED), b.limit);
      this.requeueLost(b, ended);
      const running = b.tasks[ended];
      if (running && ended < b.limit && this.handed.delete(running.taskId)) {
        this.announce(b, ended + 1);
        const killed = b.abort.aborted;
        const error = killed ? taskErrorOf(err) : this.threadLost(running, err);
        process.stderr.write(
          `${stamp()} ${killed ? 'INFO' : 'ERROR'} Executor: ${killed ? 'Killed' : 'Lost'} ${taskName(running)}: ${error.message}\n`,
        );
        this.report({ taskId: running.taskId, state: killed ? 'KILLED' : 'FAILED', error });
      }
    }
    // Whatever is left of it (the thread ended early) waits here again.
    this.takeBack(b);
    for (const task of b.tasks) {
      const h = this.handed.get(task.taskId);
      if (h?.batch === b) this.handed.delete(task.taskId);
    }
    this.dispatch();
  }

  /**
   * Why a task failed whose thread ended under it: a full heap (ERR_WORKER_OUT_OF_MEMORY, see
   * taskPool.ts) says which setting gives more.
   */
  private threadLost(task: TaskDescription, err: Error): TaskError {
    if ((err as NodeJS.ErrnoException).code !== 'ERR_WORKER_OUT_OF_MEMORY') return taskErrorOf(err);
    return {
      name: OUT_OF_MEMORY_ERROR,
      message: outOfMemoryReason(task, { memoryMB: this.memoryMB, cores: this.cores }),
    };
  }

  /** The batch's tasks from the last outcome received up to `ended` lost their outcomes. */
  private requeueLost(b: Batch, ended: number): void {
    const lost: TaskDescription[] = [];
    for (let i = b.received; i < ended; i++) {
      const task = b.tasks[i] as TaskDescription;
      const h = this.handed.get(task.taskId);
      if (!h) continue;
      this.handed.delete(task.taskId);
      if (h.killReason === undefined) lost.push(task);
      else this.reportKilledBeforeStart(task, h.killReason);
    }
    if (lost.length > 0) {
      this.waiting = [...lost, ...this.waiting.slice(this.waitingHead)];
      this.waitingHead = 0;
    }
  }

  private reportKilledBeforeStart(task: TaskDescription, reason: string): void {
    const err = new Error('The task has been aborted', { cause: new Error(reason) });
    err.name = 'AbortError';
    process.stderr.write(`${stamp()} INFO Executor: Killed ${taskName(task)}: ${err.message}\n`);
    this.report({
      taskId: task.taskId,
      state: 'KILLED',
      error: { name: err.name, message: err.message, stack: err.stack },
    });
  }
}

function taskErrorOf(err: Error): TaskError {
  return { name: err.name, message: err.message, stack: err.stack };
}

function taskName(task: TaskDescription): string {
  return `task ${task.partition}.${task.attempt} in stage ${task.stageId}.0 (TID ${task.taskId})`;
}

/**
 * What piscina needs to abort one task: `aborted`, `reason`, and one 'abort' listener. It stands
 * in for an AbortController, whose EventTarget costs more to make than a short task takes to run.
 */
class TaskAbort {
  aborted = false;
  reason: unknown;
  private listener: (() => void) | undefined;

  addEventListener(_name: 'abort', listener: () => void): void {
    this.listener = listener;
  }

  removeEventListener(_name: 'abort', listener: () => void): void {
    if (this.listener === listener) this.listener = undefined;
  }

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const listener = this.listener;
    this.listener = undefined;
    listener?.();
  }
}

let stampSecond = -1;
let stampText = '';

/** `yy/MM/dd HH:mm:ss` of now, formatted once per second. */
function stamp(): string {
  const now = Date.now();
  const second = Math.floor(now / 1000);
  if (second !== stampSecond) {
    stampSecond = second;
    const d = new Date(now);
    const p = (n: number) => String(n).padStart(2, '0');
    stampText = `${p(d.getFullYear() % 100)}/${p(d.getMonth() + 1)}/${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
  }
  return stampText;
}
