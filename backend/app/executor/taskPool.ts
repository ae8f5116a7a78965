import v8 from 'node:v8';
import { SHARE_ENV } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { distFile } from '../../util/paths.js';
import type { TaskBatchRequest, TaskOutcome, TaskRequest } from '../task/taskWorker.js';

export type TaskPool = Piscina<TaskRequest | TaskBatchRequest, TaskOutcome | number>;

/**
 * V8 flags for the task threads' heaps, set in this process before its first task thread starts
 * (a heap reads them when its thread starts; the process's own heap keeps its size).
 *
 * - `--min-semi-space-size=16`: a task thread's new space starts at 16 MiB, V8's default maximum,
 *   instead of the 2 MiB a worker thread's starts at here, which grows only when objects survive.
 *   Tasks that make short-lived values at a high rate otherwise scavenge every 2 MiB: SparkPi's
 *   darts box two doubles each (Math.random), which made a scavenge about every task.
 * - `--no-parallel-scavenge`: each thread scavenges alone. By default a scavenge wakes V8's helper
 *   threads; when an executor's cores all run tasks, as a cluster whose cores are all granted
 *   does, those helpers only take CPU from the tasks (in SparkPi's job of 1,000 tasks, about 1,200
 *   helper wake-ups and 1,500 preemptions of the two task threads).
 *
 * Memory: a semispace's pages are touched only as a thread allocates, so a task that allocates
 * little costs no more. Measured with bench/pi.bench.ts (see the issue notes).
 */
const TASK_THREAD_V8_FLAGS = ['--min-semi-space-size=16', '--no-parallel-scavenge'];
let v8FlagsSet = false;

/** One thread per core, started now (piscina), that run tasks (dist/task-worker.cjs). */
export function newTaskPool(cores: number): TaskPool {
  if (!v8FlagsSet) {
    for (const flag of TASK_THREAD_V8_FLAGS) v8.setFlagsFromString(flag);
    v8FlagsSet = true;
  }
  return new Piscina({
    filename: distFile('task-worker.cjs'),
    minThreads: cores,
    maxThreads: cores,
    // Never more than `cores` batches reach the pool (Executor's dispatch); this is a safety net.
    maxQueue: 'auto',
    idleTimeout: Number.POSITIVE_INFINITY,
    concurrentTasksPerWorker: 1,
    resourceLimits: {},
    // The process's own environment, live: a standby executor takes its launch's environment
    // after its threads have started, and tasks must see that one.
    env: SHARE_ENV,
  });
}

let prestarted: { cores: number; pool: TaskPool } | undefined;

/**
 * Starts the threads of a pool now, for the executor this process will become (a standby): a
 * thread takes about 30 ms to start, which would otherwise delay the first task.
 */
export function prestartTaskPool(cores: number): void {
  void prestarted?.pool.destroy();
  prestarted = { cores, pool: newTaskPool(cores) };
}

/** The pool started ahead when it has `cores` threads, else a new one (the other is ended). */
export function takeTaskPool(cores: number): TaskPool {
  const p = prestarted;
  prestarted = undefined;
  if (p?.cores === cores) return p.pool;
  void p?.pool.destroy();
  return newTaskPool(cores);
}
