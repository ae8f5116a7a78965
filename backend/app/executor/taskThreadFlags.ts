import v8 from 'node:v8';

/**
 * V8 flags for the task threads' heaps, set in this process before its first task thread starts
 * (a heap reads them when its thread starts; the process's own heap keeps its size).
 *
 * - `--no-parallel-scavenge`: each thread scavenges alone. By default a scavenge wakes V8's helper
 *   threads; when an executor's cores all run tasks, as a cluster whose cores are all granted
 *   does, those helpers only take CPU from the tasks (in SparkPi's job of 1,000 tasks, about 1,200
 *   helper wake-ups and 1,500 preemptions of the two task threads). Measured with
 *   bench/pi.bench.ts (see the issue notes).
 *
 * The new space keeps V8's default size, 4 MiB for a worker thread here: SparkPi's darts box two
 * doubles each (Math.random), about 3 MB per task of 10^5 darts, so a scavenge comes about every
 * task. A bigger one (`--min-semi-space-size=16`, set here before) scavenges less often but not
 * for less: a scavenge's cost grows with the space, and SparkPi's tasks spent the same on them in
 * all. And every page of a bigger space costs a page fault the first time it is used, which a
 * fresh thread pays in its first tasks: SparkPi's first tasks on fresh executors were slower at
 * 16 MiB than at 4.
 *
 * dist/wick.cjs sets them too, before it compiles the CLI bundle, when it runs an executor: V8
 * refuses a code cache made under other flags (backend/util/compileCache.ts), so an executor that
 * changed them after start-up could never use one.
 */
export const TASK_THREAD_V8_FLAGS = ['--no-parallel-scavenge'];
let set = false;

/** Sets TASK_THREAD_V8_FLAGS in this process, once. */
export function setTaskThreadV8Flags(): void {
  if (set) return;
  for (const flag of TASK_THREAD_V8_FLAGS) v8.setFlagsFromString(flag);
  set = true;
}
