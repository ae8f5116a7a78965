/**
 * Spark's `/api/v1` JSON as the dashboard reads it (backend/appstatus/sparkApi.ts writes it): the
 * fields the pages use, nothing more. Dates are Spark's strings (`2026-12-07T03:30:21.123GMT`).
 */

export interface ApplicationInfo {
  id: string;
  name: string;
  attempts: {
    startTimeEpoch: number;
    endTimeEpoch: number;
    lastUpdatedEpoch: number;
    completed: boolean;
    sparkUser: string;
  }[];
}

export interface JobData {
  jobId: number;
  name: string;
  submissionTime: string;
  completionTime?: string;
  stageIds: number[];
  status: 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'UNKNOWN';
  numTasks: number;
  numActiveTasks: number;
  numCompletedTasks: number;
  numSkippedTasks: number;
  numFailedTasks: number;
  numKilledTasks: number;
  numActiveStages: number;
  numCompletedStages: number;
  numSkippedStages: number;
  numFailedStages: number;
}

export interface StageData {
  status: 'ACTIVE' | 'COMPLETE' | 'FAILED' | 'PENDING' | 'SKIPPED';
  stageId: number;
  attemptId: number;
  name: string;
  numTasks: number;
  numActiveTasks: number;
  numCompleteTasks: number;
  numFailedTasks: number;
  numKilledTasks: number;
  submissionTime: string;
  firstTaskLaunchedTime?: string;
  completionTime?: string;
  failureReason?: string;
  executorRunTime: number;
  shuffleReadBytes: number;
  shuffleReadRecords: number;
  shuffleWriteBytes: number;
  shuffleWriteRecords: number;
  jobIds: number[];
  /** Wick's: the stages whose shuffle output it reads. */
  parentIds?: number[];
}

export interface TaskData {
  taskId: number;
  index: number;
  attempt: number;
  launchTime: string;
  duration?: number;
  executorId: string;
  host: string;
  status: string;
  errorMessage?: string;
  taskMetrics?: {
    shuffleReadMetrics: { remoteBytesRead: number; localBytesRead: number; recordsRead: number };
    shuffleWriteMetrics: { bytesWritten: number; recordsWritten: number };
  };
}

export interface TaskSummary {
  quantiles: number[];
  duration: number[];
}

export interface ExecutorData {
  id: string;
  hostPort: string;
  isActive: boolean;
  totalCores: number;
  activeTasks: number;
  failedTasks: number;
  completedTasks: number;
  totalTasks: number;
  totalDuration: number;
  totalShuffleRead: number;
  totalShuffleWrite: number;
  addTime?: string;
  removeTime?: string;
  removeReason?: string;
}

/** Spark's date string → ms since the epoch; undefined for none or a bad one. */
export function sparkTime(s: string | undefined): number | undefined {
  if (!s) return undefined;
  const t = Date.parse(s.replace(/GMT$/, 'Z'));
  return Number.isFinite(t) ? t : undefined;
}
