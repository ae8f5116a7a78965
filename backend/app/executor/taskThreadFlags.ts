import v8 from 'node:v8';

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
 *
 * dist/wick.cjs sets them too, before it compiles the CLI bundle, when it runs an executor: V8
 * refuses a code cache made under other flags (backend/cli/compileCache.ts), so an executor that
 * changed them after start-up could never use one.
 */
export const TASK_THREAD_V8_FLAGS = ['--min-semi-space-size=16', '--no-parallel-scavenge'];
let set = false;

/** Sets TASK_THREAD_V8_FLAGS in this process, once. */
export function setTaskThreadV8Flags(): void {
  if (set) return;
  for (const flag of TASK_THREAD_V8_FLAGS) v8.setFlagsFromString(flag);
  set = true;
}
