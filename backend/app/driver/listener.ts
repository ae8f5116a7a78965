import type { WickListenerTaskEnd } from '../../protocol/listener.js';
import type { TaskState } from '../../protocol/task.js';
import type { TaskMetrics } from '../task/metrics.js';

/** A task's end as a driver program hears of it (Spark's SparkListenerTaskEnd). */
export interface TaskEnd {
  taskId: number;
  /** The scheduler's job of the task (a stage attempt's task set), when it still knew it. */
  jobId?: number;
  executorId: string;
  state: Exclude<TaskState, 'LAUNCHING' | 'RUNNING'>;
  durationMs?: number;
  /** What the task measured (shuffle bytes and records, spills); absent if nothing. */
  metrics?: TaskMetrics;
}

/**
 * What a driver program may listen to (Spark's SparkListener, of which only onTaskEnd so far):
 * added with WickContext.addListener. Called in the driver's event loop, one event at a time; a
 * listener that throws is logged and kept.
 */
export interface WickListener {
  onTaskEnd?(event: TaskEnd): void;
}

// The bus's event and this interface say the same (a compile error here if they drift).
const sameAsBus: (e: Omit<WickListenerTaskEnd, 'event'>) => TaskEnd = (e) => e;
const busAsSame: (e: TaskEnd) => Omit<WickListenerTaskEnd, 'event'> = (e) => e;
void sameAsBus;
void busAsSame;
