import { availableParallelism } from 'node:os';
import { MessageChannel, type MessagePort, receiveMessageOnPort } from 'node:worker_threads';
import { Piscina } from 'piscina';
import type { TaskDescription, TaskError } from '../../protocol/executor.js';
import { distFile } from '../../util/paths.js';
import {
  BATCH_STOPPED,
  type BatchOutcome,
  type TaskBatchRequest,
  type TaskOutcome,
  type TaskRequest,
} from '../task/taskWorker.js';

export interface TaskReport {
  taskId: number;
  state: 'RUNNING' | 'FINISHED' | 'FAILED' | 'KILLED';
  result?: unknown;
  error?: TaskError;
  durationMs?: number;
}

/** The most tasks handed to a pool thread at once (see Executor). */
const MAX_BATCH = 16;

/** A task handed to a pool thread, alone or in a batch, and not ended yet. */
interface Handed {
  task: TaskDescription;
  batch: Batch;
  /** Its place in the batch. */
  index: number;
}

/** Tasks handed to one pool thread together (one piscina run). */
interface Batch {
  tasks: TaskDescription[];
  abort: TaskAbort;
  /** Shared with the thread: tasks it has claimed (started), and BATCH_STOPPED (see taskWorker). */
  control: Int32Array | undefined;
  /** Our end of the batch's port; undefined for a lone task, whose outcome is the run's result. */
  port: MessagePort | undefined;
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
 * batch, which it runs one after another, posting each outcome as it ends: a task of a few
 * microseconds then costs one message between threads instead of a round trip per task. A task
 * is RUNNING (reported, and logged) when its thread starts it, and FINISHED when it ends, as if it
 * had been handed over alone. Killing a task a thread has not started takes it and the rest of its
 * batch back (they wait here again); killing the one running ends its thread, as piscina's abort
 * does, and the batch's tasks after it wait here again.
 *
 * Writes a line per task start and end to stdout and each failure to stderr: those files are what
 * users read.
 */
export class Executor {
  private readonly pool: Piscina<TaskRequest | TaskBatchRequest, TaskOutcome | number>;
  /** Launched tasks not handed to a thread yet, oldest first. */
  private waiting: TaskDescription[] = [];
  private waitingHead = 0;
  private readonly handed = new Map<number, Handed>();
  private readonly batches = new Set<Batch>();
  private stopped = false;
  private dispatchQueued = false;
  private readonly dispatchNow = () => {
    this.dispatchQueued = false;
    this.dispatch();
  };
  /** Status reports not sent yet: see report. */
  private reports: TaskReport[] = [];
  /** Sends the status reports held until the end of this turn now (before the RpcEnv stops). */
  readonly flushReports = () => {
    const reports = this.reports;
    this.reports = [];
    for (const r of reports) {
      try {
        this.send(r);
      } catch {
        // The executor is stopping (its RpcEnv refuses sends): nobody waits for these any more.
      }
    }
  };

  constructor(
    readonly executorId: string,
    readonly cores: number,
    private readonly appDir: string,
    private readonly send: (r: TaskReport) => void,
  ) {
    this.pool = new Piscina({
      filename: distFile('task-worker.cjs'),
      minThreads: cores,
      maxThreads: cores,
      // Never more than `cores` batches reach the pool (see dispatch); this is a safety net.
      maxQueue: 'auto',
      idleTimeout: Number.POSITIVE_INFINITY,
      concurrentTasksPerWorker: 1,
      resourceLimits: {},
    });
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

  killTask(taskId: number, reason: string): void {
    for (let i = this.waitingHead; i < this.waiting.length; i++) {
      const task = this.waiting[i] as TaskDescription;
      if (task.taskId !== taskId) continue;
      // Not handed to a thread: it leaves the queue and ends KILLED, as an aborted pool task does.
      this.waiting.splice(i, 1);
      this.reportKilledBeforeStart(task, reason);
      return;
    }
    const h = this.handed.get(taskId);
    if (!h) return;
    const b = h.batch;
    if (b.control) {
      this.takeBack(b);
      // Outcomes already posted are handled first: the task may have ended meanwhile.
      this.drain(b);
      if (!this.handed.has(taskId)) return;
      if (h.index >= b.limit) {
        this.handed.delete(taskId);
        this.reportKilledBeforeStart(h.task, reason);
        this.dispatch();
        return;
      }
    }
    // It is running: end its thread (piscina's abort); the run's rejection reports it KILLED.
    b.abort.abort(new Error(reason));
  }

  async stop(): Promise<void> {
    this.flushReports();
    this.stopped = true;
    this.waiting = [];
    this.waitingHead = 0;
    for (const b of this.batches) {
      if (b.control) Atomics.or(b.control, 0, BATCH_STOPPED);
      b.abort.abort(new Error('executor stopped'));
    }
    await this.pool.destroy();
  }

  /**
   * Reports a task's state. The reports of one turn of the event loop go out together, once the
   * turn's other events are handled (setImmediate): a thread running short tasks posts outcomes
   * faster than one write each can carry them. Their order is kept. StopExecutor and stop() send
   * what is held at once; an executor ended by a signal loses at most one turn's reports, as a
   * killed one loses its own: the driver runs the tasks it never heard the end of again elsewhere.
   */
  private report(r: TaskReport): void {
    if (this.reports.length === 0) setImmediate(this.flushReports);
    this.reports.push(r);
  }

  /** Hands waiting tasks to free threads. */
  private dispatch(): void {
    while (!this.stopped && this.batches.size < this.cores) {
      const count = this.waiting.length - this.waitingHead;
      if (count === 0) return;
      const freeThreads = this.cores - this.batches.size;
      const take = Math.min(MAX_BATCH, Math.ceil(count / freeThreads));
      const tasks = this.waiting.slice(this.waitingHead, this.waitingHead + take);
      this.waitingHead += take;
      if (this.waitingHead === this.waiting.length) {
        this.waiting = [];
        this.waitingHead = 0;
      }
      this.runBatch(tasks);
    }
  }

  private runBatch(tasks: TaskDescription[]): void {
    const alone = tasks.length === 1;
    const b: Batch = {
      tasks,
      abort: new TaskAbort(),
      control: alone ? undefined : new Int32Array(new SharedArrayBuffer(4)),
      port: undefined,
      received: 0,
      limit: tasks.length,
      takenBack: false,
      announced: 0,
    };
    this.batches.add(b);
    for (const [index, task] of tasks.entries())
      this.handed.set(task.taskId, { task, batch: b, index });
    this.announce(b, 1);
    let run: Promise<TaskOutcome | number>;
    const started = performance.now();
    if (alone) {
      run = this.pool.run(
        { appDir: this.appDir, task: tasks[0] as TaskDescription },
        {
          signal: b.abort,
        },
      );
    } else {
      const { port1, port2 } = new MessageChannel();
      b.port = port1;
      port1.on('message', (m: BatchOutcome) => this.onOutcome(b, m));
      run = this.pool.run(
        { appDir: this.appDir, tasks, control: b.control as Int32Array, port: port2 },
        { name: 'runBatch', signal: b.abort, transferList: [port2] },
      );
    }
    run.then(
      (result) => {
        if (alone) {
          const durationMs = performance.now() - started;
          this.onOutcome(b, { index: 0, outcome: result as TaskOutcome, durationMs });
        }
        this.batchEnded(b, undefined);
      },
      (err: Error) => this.batchEnded(b, err),
    );
  }

  /** Reports RUNNING for the batch's tasks before `upTo` that have not been yet. */
  private announce(b: Batch, upTo: number): void {
    for (; b.announced < Math.min(upTo, b.limit); b.announced++) {
      const task = b.tasks[b.announced] as TaskDescription;
      if (!this.handed.has(task.taskId)) continue;
      stdoutLine(`${stamp()} INFO Executor: Running ${taskName(task)}\n`);
      this.report({ taskId: task.taskId, state: 'RUNNING' });
    }
  }

  private onOutcome(b: Batch, m: BatchOutcome): void {
    const task = b.tasks[m.index] as TaskDescription;
    b.received = m.index + 1;
    if (!this.handed.delete(task.taskId)) return;
    this.announce(b, m.index + 1);
    const durationMs = m.durationMs;
    const name = taskName(task);
    if (m.outcome.ok) {
      stdoutLine(`${stamp()} INFO Executor: Finished ${name} in ${durationMs.toFixed(0)} ms\n`);
      this.report({ taskId: task.taskId, state: 'FINISHED', result: m.outcome.result, durationMs });
    } else {
      const e = m.outcome.error;
      process.stderr.write(
        `${stamp()} ERROR Executor: Exception in ${name}\n${e.stack ?? e.message}\n`,
      );
      this.report({ taskId: task.taskId, state: 'FAILED', error: e, durationMs });
    }
    // The thread goes straight on to the next task it can claim.
    if (b.control && (Atomics.load(b.control, 0) & ~BATCH_STOPPED) > m.index + 1)
      this.announce(b, m.index + 2);
  }

  /** Handles the outcomes the batch's thread has posted and we have not read yet. */
  private drain(b: Batch): void {
    if (!b.port) return;
    for (let m = receiveMessageOnPort(b.port); m; m = receiveMessageOnPort(b.port)) {
      this.onOutcome(b, m.message as BatchOutcome);
    }
  }

  /** Stops the batch's thread from starting more of it; those tasks wait here again, in order. */
  private takeBack(b: Batch): void {
    if (!b.control || b.takenBack) return;
    b.takenBack = true;
    const claimed = Atomics.or(b.control, 0, BATCH_STOPPED) & ~BATCH_STOPPED;
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
    if (b.control) Atomics.or(b.control, 0, BATCH_STOPPED);
    this.drain(b);
    b.port?.close();
    this.batches.delete(b);
    if (err) {
      // The task that was running when the thread ended, if any, ends with it; the batch's
      // tasks it had not started wait here again.
      this.takeBack(b);
      const running = b.tasks[b.received];
      if (running && b.received < b.limit && this.handed.delete(running.taskId)) {
        this.announce(b, b.received + 1);
        const killed = b.abort.aborted;
        process.stderr.write(
          `${stamp()} ${killed ? 'INFO' : 'ERROR'} Executor: ${killed ? 'Killed' : 'Lost'} ${taskName(running)}: ${err.message}\n`,
        );
        this.report({
          taskId: running.taskId,
          state: killed ? 'KILLED' : 'FAILED',
          error: { name: err.name, message: err.message, stack: err.stack },
        });
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

/**
 * Task start and end lines for stdout, written together once per turn of the event loop rather
 * than one write each (a short task's end and the next one's start come in the same turn). Their
 * order is kept, and what is pending is written when the process exits.
 */
let pendingStdout = '';

function stdoutLine(line: string): void {
  if (pendingStdout === '') setImmediate(flushStdout);
  pendingStdout += line;
}

function flushStdout(): void {
  if (pendingStdout === '') return;
  const text = pendingStdout;
  pendingStdout = '';
  process.stdout.write(text);
}

process.on('exit', flushStdout);

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
