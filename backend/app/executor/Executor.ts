import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import type { TaskDescription, TaskError } from '../../protocol/executor.js';
import { distFile } from '../../util/paths.js';
import type { TaskOutcome, TaskRequest } from '../task/taskWorker.js';

export interface TaskReport {
  taskId: number;
  state: 'RUNNING' | 'FINISHED' | 'FAILED' | 'KILLED';
  result?: unknown;
  error?: TaskError;
  durationMs?: number;
}

/**
 * Runs tasks on a pool of worker threads, one per core (piscina), so that an executor with N
 * cores really runs N tasks at once. Tasks launched beyond the cores wait here, in launch order,
 * and start as running ones end: the driver may send a few more than the cores when tasks are
 * short (DriverEndpoint's prefetch), so that the next task is already here when a core frees up.
 * At most `cores` tasks run at a time, as in Spark; a task is RUNNING (reported, and logged) only
 * once it starts. Writes a line per task start and end to stdout and each failure to stderr: those
 * files are what users read.
 */
export class Executor {
  private readonly pool: Piscina<TaskRequest, TaskOutcome>;
  private readonly running = new Map<number, TaskAbort>();
  /** Launched tasks waiting for a core, oldest first. */
  private readonly waiting: TaskDescription[] = [];
  private waitingHead = 0;
  private stopped = false;

  constructor(
    readonly executorId: string,
    readonly cores: number,
    private readonly appDir: string,
    private readonly report: (r: TaskReport) => void,
  ) {
    this.pool = new Piscina({
      filename: distFile('task-worker.cjs'),
      minThreads: cores,
      maxThreads: cores,
      // Never more than `cores` tasks reach the pool (see launchTask); this is a safety net.
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

  /** Tasks launched here and not yet ended: running, then waiting for a core. */
  get activeCount(): number {
    return this.running.size + this.waiting.length - this.waitingHead;
  }

  launchTask(task: TaskDescription): void {
    if (this.stopped) return;
    if (this.running.size < this.cores) this.start(task);
    else this.waiting.push(task);
  }

  private start(task: TaskDescription): void {
    const name = `task ${task.partition}.${task.attempt} in stage ${task.stageId}.0 (TID ${task.taskId})`;
    stdoutLine(`${stamp()} INFO Executor: Running ${name}\n`);
    const abort = new TaskAbort();
    this.running.set(task.taskId, abort);
    const started = performance.now();
    this.report({ taskId: task.taskId, state: 'RUNNING' });
    this.pool.run({ appDir: this.appDir, task }, { signal: abort }).then(
      (outcome) => {
        this.running.delete(task.taskId);
        const durationMs = performance.now() - started;
        if (outcome.ok) {
          stdoutLine(`${stamp()} INFO Executor: Finished ${name} in ${durationMs.toFixed(0)} ms\n`);
          this.report({
            taskId: task.taskId,
            state: 'FINISHED',
            result: outcome.result,
            durationMs,
          });
        } else {
          process.stderr.write(
            `${stamp()} ERROR Executor: Exception in ${name}\n${outcome.error.stack ?? outcome.error.message}\n`,
          );
          this.report({ taskId: task.taskId, state: 'FAILED', error: outcome.error, durationMs });
        }
        this.startWaiting();
      },
      (err: Error) => {
        this.running.delete(task.taskId);
        const killed = abort.aborted;
        process.stderr.write(
          `${stamp()} ${killed ? 'INFO' : 'ERROR'} Executor: ${killed ? 'Killed' : 'Lost'} ${name}: ${err.message}\n`,
        );
        this.report({
          taskId: task.taskId,
          state: killed ? 'KILLED' : 'FAILED',
          error: { name: err.name, message: err.message, stack: err.stack },
        });
        this.startWaiting();
      },
    );
  }

  /** Starts waiting tasks while cores are free. */
  private startWaiting(): void {
    while (!this.stopped && this.running.size < this.cores && this.waitingHead < this.waiting.length) {
      const next = this.waiting[this.waitingHead] as TaskDescription;
      this.waiting[this.waitingHead++] = undefined as unknown as TaskDescription;
      if (this.waitingHead === this.waiting.length) {
        this.waiting.length = 0;
        this.waitingHead = 0;
      }
      this.start(next);
    }
  }

  killTask(taskId: number, reason: string): void {
    const running = this.running.get(taskId);
    if (running) {
      running.abort(new Error(reason));
      return;
    }
    // Not started yet: it leaves the queue and ends KILLED, as an aborted pool task does.
    for (let i = this.waitingHead; i < this.waiting.length; i++) {
      const task = this.waiting[i] as TaskDescription;
      if (task.taskId !== taskId) continue;
      this.waiting.splice(i, 1);
      const name = `task ${task.partition}.${task.attempt} in stage ${task.stageId}.0 (TID ${task.taskId})`;
      const err = new Error('The task has been aborted', { cause: new Error(reason) });
      err.name = 'AbortError';
      process.stderr.write(`${stamp()} INFO Executor: Killed ${name}: ${err.message}\n`);
      this.report({
        taskId,
        state: 'KILLED',
        error: { name: err.name, message: err.message, stack: err.stack },
      });
      return;
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.waiting.length = 0;
    this.waitingHead = 0;
    for (const a of this.running.values()) a.abort(new Error('executor stopped'));
    await this.pool.destroy();
  }
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
