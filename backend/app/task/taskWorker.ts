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

export default async function run(req: TaskRequest): Promise<TaskOutcome> {
  if (!compiler || compilerDir !== req.appDir) {
    compiler = new FunctionCompiler(req.appDir);
    compilerDir = req.appDir;
  }
  try {
    return { ok: true, result: await runTask(req.task, compiler) };
  } catch (err) {
    const e = err instanceof Error ? err : new Error(String(err));
    return { ok: false, error: { name: e.name, message: e.message, stack: e.stack } };
  }
}
