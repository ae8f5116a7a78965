import type { MessagePort } from 'node:worker_threads';
import type { TaskDescription, TaskError } from '../../protocol/executor.js';
import { FunctionCompiler } from './compile.js';
import { runTask } from './runTask.js';

/**
 * The body of an executor's pool threads (bundled as dist/task-worker.cjs and loaded by piscina).
 * Each thread keeps its compiled functions between tasks.
 */
let compiler: FunctionCompiler | undefined;
let compilerDir: string | undefined;

export interface TaskRequest {
  appDir: string;
  task: TaskDescription;
}

export type TaskOutcome = { ok: true; result: unknown } | { ok: false; error: TaskError };

/**
 * Several tasks for one thread, run one after another (the `runBatch` export). Before it starts
 * task i the thread claims it by moving control[0] from i to i + 1; the executor sets
 * BATCH_STOPPED in control[0] to take back the tasks not claimed yet (to kill one of them, or to
 * stop). Each task's outcome goes to `port` as it ends, so the executor reports it at once.
 */
export interface TaskBatchRequest {
  appDir: string;
  tasks: TaskDescription[];
  control: Int32Array;
  port: MessagePort;
}

/** What the thread posts on the batch's port as each task ends. */
export interface BatchOutcome {
  index: number;
  outcome: TaskOutcome;
  durationMs: number;
}

export const BATCH_STOPPED = 1 << 30;

function compilerFor(appDir: string): FunctionCompiler {
  if (!compiler || compilerDir !== appDir) {
    compiler = new FunctionCompiler(appDir);
    compilerDir = appDir;
  }
  return compiler;
}

async function runOne(task: TaskDescription, c: FunctionCompiler): Promise<TaskOutcome> {
  try {
    return { ok: true, result: await runTask(task, c) };
  } catch (err) {
    return { ok: false, error: taskError(err) };
  }
}

function taskError(err: unknown): TaskError {
  const e = err instanceof Error ? err : new Error(String(err));
  return { name: e.name, message: e.message, stack: e.stack };
}

export default function run(req: TaskRequest): Promise<TaskOutcome> {
  return runOne(req.task, compilerFor(req.appDir));
}

/** Runs a batch (see TaskBatchRequest); resolves with how many of its tasks it ran. */
export async function runBatch(req: TaskBatchRequest): Promise<number> {
  const c = compilerFor(req.appDir);
  let i = 0;
  try {
    for (; i < req.tasks.length; i++) {
      if (Atomics.compareExchange(req.control, 0, i, i + 1) !== i) break;
      const started = performance.now();
      const outcome = await runOne(req.tasks[i] as TaskDescription, c);
      const durationMs = performance.now() - started;
      try {
        req.port.postMessage({ index: i, outcome, durationMs } satisfies BatchOutcome);
      } catch (err) {
        // A result that cannot be cloned (a function, say) fails its task, as a lone task's does.
        req.port.postMessage({
          index: i,
          outcome: { ok: false, error: taskError(err) },
          durationMs,
        } satisfies BatchOutcome);
      }
    }
  } finally {
    req.port.close();
  }
  return i;
}
