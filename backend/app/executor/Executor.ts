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
 * cores really runs N tasks at once. Writes a line per task start and end to stdout and each
 * failure to stderr: those files are what users read.
 */
export class Executor {
  private readonly pool: Piscina<TaskRequest, TaskOutcome>;
  private readonly running = new Map<number, AbortController>();

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
      // Tasks beyond the cores wait here rather than being refused.
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
    const name = `task ${task.partition}.${task.attempt} in stage ${task.stageId}.0 (TID ${task.taskId})`;
    process.stdout.write(`${stamp()} INFO Executor: Running ${name}\n`);
    const abort = new AbortController();
    this.running.set(task.taskId, abort);
    const started = performance.now();
    this.report({ taskId: task.taskId, state: 'RUNNING' });
    this.pool.run({ appDir: this.appDir, task }, { signal: abort.signal }).then(
      (outcome) => {
        this.running.delete(task.taskId);
        const durationMs = performance.now() - started;
        if (outcome.ok) {
          process.stdout.write(
            `${stamp()} INFO Executor: Finished ${name} in ${durationMs.toFixed(0)} ms\n`,
          );
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
      },
      (err: Error) => {
        this.running.delete(task.taskId);
        const killed = abort.signal.aborted;
        process.stderr.write(
          `${stamp()} ${killed ? 'INFO' : 'ERROR'} Executor: ${killed ? 'Killed' : 'Lost'} ${name}: ${err.message}\n`,
        );
        this.report({
          taskId: task.taskId,
          state: killed ? 'KILLED' : 'FAILED',
          error: { name: err.name, message: err.message, stack: err.stack },
        });
      },
    );
  }

  killTask(taskId: number, reason: string): void {
    this.running.get(taskId)?.abort(new Error(reason));
  }

  async stop(): Promise<void> {
    for (const a of this.running.values()) a.abort(new Error('executor stopped'));
    await this.pool.destroy();
  }
}

function stamp(): string {
  const d = new Date();
  const p = (n: number) => String(n).padStart(2, '0');
  return `${p(d.getFullYear() % 100)}/${p(d.getMonth() + 1)}/${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}
