import type {
  WickListenerJobEnd,
  WickListenerJobStart,
  WickListenerStageCompleted,
  WickListenerStageSubmitted,
  WickListenerTaskEnd,
  WickListenerTaskStart,
} from '../../protocol/listener.js';
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
  /** The stage and its attempt the task ran for, and its partition (index). */
  stageId?: number;
  stageAttemptId?: number;
  index?: number;
  /** How a task that did not finish ended: its error, with its stack. */
  error?: string;
}

/** An action started a job (Spark's SparkListenerJobStart): its stages, the ResultStage last. */
export interface JobStart {
  jobId: number;
  /** Every stage the job needs, skipped ones too (their outputs were there already). */
  stageIds: number[];
  /** ms since the epoch */
  time: number;
}

/** A job ended (Spark's SparkListenerJobEnd). */
export interface JobEnd {
  jobId: number;
  result: 'JobSucceeded' | 'JobFailed';
  error?: string;
  time: number;
}

/** A stage attempt was submitted with its tasks (a rerun: only its missing partitions). */
export interface StageSubmitted {
  stageId: number;
  stageAttemptId: number;
  jobId: number;
  name: string;
  numTasks: number;
  time: number;
}

/** A stage attempt ended; failureReason when it failed (a fetch failure reruns it). */
export interface StageCompleted {
  stageId: number;
  stageAttemptId: number;
  name: string;
  numTasks: number;
  time: number;
  failureReason?: string;
}

/** A task was launched on an executor (Spark's SparkListenerTaskStart). */
export interface TaskStart {
  taskId: number;
  stageId: number;
  stageAttemptId: number;
  /** The partition it computes. */
  index: number;
  /** Its attempt at that partition (0 first). */
  attempt: number;
  executorId: string;
  time: number;
}

/**
 * What a driver program may listen to (Spark's SparkListener): added with
 * WickContext.addListener. Called in the driver's event loop, one event at a time, in the order
 * they happened; a listener that throws is logged and kept.
 */
export interface WickListener {
  onJobStart?(event: JobStart): void;
  onJobEnd?(event: JobEnd): void;
  onStageSubmitted?(event: StageSubmitted): void;
  onStageCompleted?(event: StageCompleted): void;
  onTaskStart?(event: TaskStart): void;
  onTaskEnd?(event: TaskEnd): void;
}

// The bus's events and these interfaces say the same (a compile error here if they drift); the
// interfaces are what users' folders get (npm run types), without the schemas' library.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Bare<E> = Omit<E, 'event'>;
const same: [
  Same<Bare<WickListenerTaskEnd>, TaskEnd>,
  Same<Bare<WickListenerTaskStart>, TaskStart>,
  Same<Bare<WickListenerJobStart>, JobStart>,
  Same<Bare<WickListenerJobEnd>, JobEnd>,
  Same<Bare<WickListenerStageSubmitted>, StageSubmitted>,
  Same<Bare<WickListenerStageCompleted>, StageCompleted>,
] = [true, true, true, true, true, true];
void same;
