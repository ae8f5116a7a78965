/**
 * A task that runs out of memory, in the words the executor (a task thread's heap was full) and
 * the driver (an executor process died of it) both use, so that the job's failure says what ran
 * out and which setting gives more.
 *
 * An executor's tasks run on its task threads (app/executor/taskPool.ts), one per core, each with
 * a heap of its own: the executor's memory (wick.executor.memory, which its worker reserved for
 * it) is shared out between them, so that an executor stays within what it was given however
 * many of its tasks allocate at once, as the tasks of a Spark executor share its one heap.
 */

/** The least a task thread's heap gets, whatever the share: less cannot load a task's code. */
export const MIN_TASK_THREAD_HEAP_MB = 16;

/** Each task thread's heap (its old generation, in MiB) for an executor of `memoryMB` and `cores`. */
export function taskThreadHeapMB(memoryMB: number, cores: number): number {
  return Math.max(MIN_TASK_THREAD_HEAP_MB, Math.floor(memoryMB / Math.max(1, cores)));
}

/** 1024 → "1g", 1536 → "1536m": as wick.executor.memory is written. */
export function formatMemoryMB(mb: number): string {
  return mb % 1024 === 0 ? `${mb / 1024}g` : `${mb}m`;
}

export interface OutOfMemoryTask {
  taskId: number;
  partition: number;
  stageId: number;
}

/** The executor's memory and cores, when known (an executor started without --memory). */
export interface TaskHeap {
  memoryMB: number | undefined;
  cores: number;
}

export const OUT_OF_MEMORY_ERROR = 'OutOfMemoryError';

/** Why the task failed: it names the task, the heap it had, and the setting that gives more. */
export function outOfMemoryReason(task: OutOfMemoryTask, heap: TaskHeap): string {
  const what = `Task ${task.taskId} (partition ${task.partition} of stage ${task.stageId}) ran out of memory`;
  if (heap.memoryMB === undefined)
    return `${what}: its executor set no heap size; set wick.executor.memory`;
  const thread = taskThreadHeapMB(heap.memoryMB, heap.cores);
  const share =
    heap.cores > 1 ? `, ${formatMemoryMB(thread)} for each of its ${heap.cores} task threads` : '';
  return `${what}: executor heap ${formatMemoryMB(heap.memoryMB)}${share}; set wick.executor.memory higher`;
}

/**
 * Whether an executor's end, as its worker reported it (the exit and the end of its stderr),
 * says that Node ran out of heap: V8's fatal "JavaScript heap out of memory", which ends the whole
 * process (an allocation too large for a task thread's heap can do that too).
 */
export function isOutOfMemoryExit(message: string | undefined): boolean {
  return message !== undefined && /JavaScript heap out of memory/.test(message);
}
