import { createRequire } from 'node:module';
import { SHARE_ENV } from 'node:worker_threads';
import type { Piscina } from 'piscina';
import { taskThreadHeapMB } from '../../shared/outOfMemory.js';
import { distFile } from '../../util/paths.js';
import type {
  TaskBatchRequest,
  TaskOutcome,
  TaskRequest,
  TaskThreadData,
} from '../task/taskWorker.js';
import { setTaskThreadV8Flags } from './taskThreadFlags.js';

export type TaskPool = Piscina<TaskRequest | TaskBatchRequest, TaskOutcome | number> & {
  /**
   * The BroadcastChannel its threads read the tasks added to their batches on (taskWorker.ts):
   * one name per pool, so that a thread reads only its own executor's adds.
   */
  readonly addsChannel: string;
};

let pools = 0;

let piscina: typeof import('piscina') | undefined;

/**
 * piscina, loaded when the first pool starts rather than when this module is: a `wick submit` to
 * a cluster imports the executor's code (local mode runs it) but never starts a pool, and loading
 * piscina (and the worker_threads it needs) took 20-25 ms of its CPU. In the CLI bundle `require`
 * is the bundle's own; from sources (ES modules) there is none.
 */
function loadPiscina(): typeof import('piscina') {
  piscina ??= (typeof require === 'function' ? require : createRequire(import.meta.url))(
    'piscina',
  ) as typeof import('piscina');
  return piscina;
}

/**
 * One thread per core, started now (piscina), that run tasks (dist/task-worker.cjs). Given the
 * executor's memory, each thread's heap gets its share (shared/outOfMemory.ts): a task that fills
 * it ends its thread with ERR_WORKER_OUT_OF_MEMORY, and piscina starts another, so the task fails
 * and the executor lives on, where a full process heap would end the executor and every task on
 * it.
 */
export function newTaskPool(cores: number, memoryMB?: number): TaskPool {
  setTaskThreadV8Flags();
  const addsChannel = `wick-task-adds-${process.pid}-${++pools}`;
  const pool = new (loadPiscina().Piscina)<TaskRequest | TaskBatchRequest, TaskOutcome | number>({
    filename: distFile('task-worker.cjs'),
    minThreads: cores,
    maxThreads: cores,
    // Never more than `cores` batches reach the pool (Executor's dispatch); this is a safety net.
    maxQueue: 'auto',
    idleTimeout: Number.POSITIVE_INFINITY,
    concurrentTasksPerWorker: 1,
    resourceLimits:
      memoryMB === undefined ? {} : { maxOldGenerationSizeMb: taskThreadHeapMB(memoryMB, cores) },
    // The process's own environment, live: a standby executor takes its launch's environment
    // after its threads have started, and tasks must see that one.
    env: SHARE_ENV,
    workerData: { addsChannel } satisfies TaskThreadData,
  });
  return Object.assign(pool, { addsChannel });
}

let prestarted: { cores: number; memoryMB: number | undefined; pool: TaskPool } | undefined;

/**
 * Starts the threads of a pool now, for the executor this process will become (a standby): a
 * thread takes about 30 ms to start, which would otherwise delay the first task.
 */
export function prestartTaskPool(cores: number, memoryMB?: number): void {
  void prestarted?.pool.destroy();
  prestarted = { cores, memoryMB, pool: newTaskPool(cores, memoryMB) };
}

/**
 * The pool started ahead when it has `cores` threads with the heaps of `memoryMB` (a thread's
 * heap is fixed when it starts), else a new one (the other is ended).
 */
export function takeTaskPool(cores: number, memoryMB?: number): TaskPool {
  const p = prestarted;
  prestarted = undefined;
  if (p?.cores === cores && p.memoryMB === memoryMB) return p.pool;
  void p?.pool.destroy();
  return newTaskPool(cores, memoryMB);
}
