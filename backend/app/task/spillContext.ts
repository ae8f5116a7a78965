import type { TaskMetrics } from '../../protocol/task.js';

/** Where and when a task's reduce-side buffers spill, and what it counts them in. */
export interface SpillContext {
  /** The executor's spill folder (spillFiles.ts). */
  dir: string;
  taskId: number;
  /** Estimated bytes a buffer may hold before it spills (wick.shuffle.spill.memoryThreshold). */
  threshold: number;
  metrics: TaskMetrics;
}
