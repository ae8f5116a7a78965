/** What an application imports: `import { WickContext } from 'wick'`. */

export { ClosureError } from './closure.js';
export type {
  JobEnd,
  JobStart,
  StageCompleted,
  StageSubmitted,
  TaskEnd,
  TaskStart,
  WickListener,
} from './driver/listener.js';
export { RDD } from './driver/RDD.js';
export { JobFailedError } from './driver/scheduler/TaskScheduler.js';
export type { JobInfo, StageInfo, StatusTracker } from './driver/status/AppStatusTracker.js';
export { WickContext, type WickContextOptions } from './driver/WickContext.js';
export { addTaskMetrics, type TaskMetrics } from './task/metrics.js';
export { WickFiles } from './WickFiles.js';
