/**
 * An AppStatusStore as Spark's REST API writes it (Spark's status/api/v1/api.scala: ApplicationInfo,
 * JobData, StageData, TaskData, ExecutorSummary, ApplicationEnvironmentInfo), field names and all,
 * so that a tool written for Spark's `/api/v1` reads Wick's. Dates as Spark's JacksonMessageWriter
 * writes them: `2015-02-03T16:42:40.317GMT`. What Wick does not have (RDD storage, accumulators,
 * JVM memory) is left out or zero rather than made up; Wick's names are kept in `wickProperties`
 * beside Spark's `sparkProperties`.
 */
import type {
  AppStatusStore,
  LiveExecutor,
  LiveJob,
  LiveStage,
  LiveTask,
  StageStatus,
  TaskStatus,
} from './AppStatusStore.js';

/** A time as Spark's API writes it. */
export function sparkDate(ms: number): string {
  return new Date(ms).toISOString().replace('Z', 'GMT');
}

/** What a source says of an application besides its store (the master knows its state). */
export interface ApplicationSummary {
  id: string;
  name: string;
  user: string;
  startTime: number;
  endTime?: number;
  lastUpdated: number;
  completed: boolean;
}

export function applicationInfo(a: ApplicationSummary, version: string) {
  const end = a.endTime ?? -1;
  return {
    id: a.id,
    name: a.name,
    attempts: [
      {
        startTime: sparkDate(a.startTime),
        endTime: sparkDate(end === -1 ? 0 : end),
        lastUpdated: sparkDate(a.lastUpdated),
        duration: end === -1 ? 0 : end - a.startTime,
        sparkUser: a.user,
        completed: a.completed,
        appSparkVersion: version,
        startTimeEpoch: a.startTime,
        endTimeEpoch: end,
        lastUpdatedEpoch: a.lastUpdated,
      },
    ],
  };
}

export function jobData(j: LiveJob) {
  return {
    jobId: j.jobId,
    name: `job ${j.jobId}`,
    submissionTime: sparkDate(j.submissionTime),
    ...(j.completionTime !== undefined ? { completionTime: sparkDate(j.completionTime) } : {}),
    stageIds: [...j.stageIds],
    jobGroup: undefined,
    status: j.status,
    numTasks: j.counts.numTasks,
    numActiveTasks: j.counts.numActiveTasks,
    numCompletedTasks: j.counts.numCompletedTasks,
    numSkippedTasks: j.numSkippedTasks,
    numFailedTasks: j.counts.numFailedTasks,
    numKilledTasks: j.counts.numKilledTasks,
    numCompletedIndices: j.counts.numCompletedTasks,
    numActiveStages: j.submittedStages.size - j.completedStages.size - j.numFailedStages,
    numCompletedStages: j.completedStages.size,
    numSkippedStages: j.numSkippedStages,
    numFailedStages: j.numFailedStages,
    killedTasksSummary: {},
  };
}

export function stageData(s: LiveStage, withTasks = false) {
  const t = s.totals;
  return {
    status: s.status satisfies StageStatus,
    stageId: s.stageId,
    attemptId: s.attemptId,
    numTasks: s.counts.numTasks,
    numActiveTasks: s.counts.numActiveTasks,
    numCompleteTasks: s.counts.numCompletedTasks,
    numFailedTasks: s.counts.numFailedTasks,
    numKilledTasks: s.counts.numKilledTasks,
    numCompletedIndices: s.counts.numCompletedTasks,
    submissionTime: sparkDate(s.submissionTime),
    ...(s.firstTaskLaunchedTime !== undefined
      ? { firstTaskLaunchedTime: sparkDate(s.firstTaskLaunchedTime) }
      : {}),
    ...(s.completionTime !== undefined ? { completionTime: sparkDate(s.completionTime) } : {}),
    ...(s.failureReason !== undefined ? { failureReason: s.failureReason } : {}),
    executorRunTime: t.executorRunTime,
    inputBytes: 0,
    inputRecords: 0,
    outputBytes: 0,
    outputRecords: 0,
    shuffleRemoteBytesRead: t.shuffleRemoteBytesRead,
    shuffleLocalBytesRead: t.shuffleLocalBytesRead,
    shuffleReadBytes: t.shuffleReadBytes,
    shuffleReadRecords: t.shuffleReadRecords,
    shuffleWriteBytes: t.shuffleWriteBytes,
    shuffleWriteRecords: t.shuffleWriteRecords,
    memoryBytesSpilled: t.memoryBytesSpilled,
    diskBytesSpilled: t.diskBytesSpilled,
    name: s.name,
    details: '',
    schedulingPool: 'default',
    rddIds: [],
    accumulatorUpdates: [],
    jobIds: [...s.jobIds],
    // Wick's, not in Spark's StageData (Spark's UI reads it from StageInfo): the job page's DAG.
    ...(s.parentIds !== undefined ? { parentIds: [...s.parentIds] } : {}),
    ...(withTasks
      ? { tasks: Object.fromEntries([...s.tasks.values()].map((k) => [k.taskId, taskData(k)])) }
      : {}),
    killedTasksSummary: {},
  };
}

export function taskData(k: LiveTask, host?: string) {
  const m = k.metrics;
  const read = m?.shuffleRead;
  return {
    taskId: k.taskId,
    index: k.index,
    attempt: k.attempt,
    launchTime: sparkDate(k.launchTime),
    ...(k.durationMs !== undefined ? { duration: k.durationMs } : {}),
    executorId: k.executorId,
    host: host ?? '',
    status: k.status,
    taskLocality: 'ANY',
    speculative: false,
    accumulatorUpdates: [],
    ...(k.errorMessage !== undefined ? { errorMessage: k.errorMessage } : {}),
    ...(k.status !== 'RUNNING'
      ? {
          taskMetrics: {
            executorRunTime: k.durationMs ?? 0,
            resultSize: 0,
            memoryBytesSpilled: m?.memoryBytesSpilled ?? 0,
            diskBytesSpilled: m?.diskBytesSpilled ?? 0,
            shuffleReadMetrics: {
              remoteBlocksFetched: 0,
              localBlocksFetched: 0,
              fetchWaitTime: read?.fetchWaitTimeMs ?? 0,
              remoteBytesRead: read?.remoteBytesRead ?? 0,
              remoteBytesReadToDisk: read?.remoteBytesReadToDisk ?? 0,
              localBytesRead: read?.localBytesRead ?? 0,
              recordsRead: read?.recordsRead ?? 0,
            },
            shuffleWriteMetrics: {
              bytesWritten: m?.shuffleWrite?.bytesWritten ?? 0,
              writeTime: 0,
              recordsWritten: m?.shuffleWrite?.recordsWritten ?? 0,
            },
          },
        }
      : {}),
  };
}

export function executorSummary(e: LiveExecutor) {
  return {
    id: e.id,
    hostPort: e.host,
    isActive: e.isActive,
    rddBlocks: 0,
    memoryUsed: 0,
    diskUsed: 0,
    totalCores: e.cores,
    maxTasks: e.cores,
    activeTasks: e.activeTasks,
    failedTasks: e.failedTasks,
    completedTasks: e.completedTasks,
    totalTasks: e.activeTasks + e.failedTasks + e.completedTasks,
    totalDuration: e.totalDurationMs,
    totalGCTime: 0,
    totalInputBytes: 0,
    totalShuffleRead: e.totalShuffleRead,
    totalShuffleWrite: e.totalShuffleWrite,
    isBlacklisted: false,
    maxMemory: 0,
    ...(e.addTime !== undefined ? { addTime: sparkDate(e.addTime) } : {}),
    ...(e.removeTime !== undefined ? { removeTime: sparkDate(e.removeTime) } : {}),
    ...(e.removeReason !== undefined ? { removeReason: e.removeReason } : {}),
    executorLogs: {},
    blacklistedInStages: [],
    attributes: {},
    resources: {},
    resourceProfileId: 0,
    isExcluded: false,
    excludedInStages: [],
  };
}

export function environmentInfo(store: AppStatusStore) {
  const env = store.environment;
  return {
    runtime: {
      javaVersion: '',
      javaHome: '',
      scalaVersion: '',
      nodeVersion: env?.runtime.nodeVersion ?? '',
      platform: env?.runtime.platform ?? '',
      wickVersion: env?.runtime.wickVersion ?? '',
    },
    sparkProperties: (env?.wickProperties ?? []).map(([k, v]) => [k, v]),
    hadoopProperties: [],
    systemProperties: [],
    metricsProperties: [],
    classpathEntries: [],
    resourceProfiles: [],
  };
}

/** Spark's taskList sortBy: `ID` (default), `runtime` (shortest first), `-runtime`. */
export type TaskSorting = 'ID' | 'runtime' | '-runtime';

export function taskList(
  stage: LiveStage,
  hostOf: (executorId: string) => string | undefined,
  {
    offset,
    length,
    sortBy,
    status,
  }: { offset: number; length: number; sortBy: TaskSorting; status?: ReadonlySet<TaskStatus> },
) {
  const tasks = [...stage.tasks.values()].filter((t) => !status || status.has(t.status));
  const runtime = (t: LiveTask) => t.durationMs ?? -1;
  if (sortBy === 'ID') tasks.sort((a, b) => a.taskId - b.taskId);
  else if (sortBy === 'runtime') tasks.sort((a, b) => runtime(a) - runtime(b));
  else tasks.sort((a, b) => runtime(b) - runtime(a));
  return tasks.slice(offset, offset + length).map((t) => taskData(t, hostOf(t.executorId)));
}

/** Spark's default taskSummary quantiles. */
export const DEFAULT_QUANTILES = [0.05, 0.25, 0.5, 0.75, 0.95];

/**
 * Spark's taskSummary (TaskMetricDistributions) over the successful tasks a stage attempt keeps:
 * each metric at each quantile, as Spark's AppStatusStore.taskSummary picks them (the value at
 * index round(q × (n − 1)) of the sorted values). Undefined when no task has succeeded (Spark's
 * 404). Only the metrics Wick measures; a stage whose tasks were partly reported as sums
 * (statusReport.ts) is summarised over those listed one by one.
 */
export function taskSummary(stage: LiveStage, quantiles: readonly number[]) {
  const done = [...stage.tasks.values()].filter((t) => t.status === 'SUCCESS');
  if (done.length === 0) return undefined;
  const at = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    return quantiles.map((q) => sorted[Math.round(q * (sorted.length - 1))] ?? 0);
  };
  const of = (f: (t: LiveTask) => number) => at(done.map(f));
  return {
    quantiles: [...quantiles],
    duration: of((t) => t.durationMs ?? 0),
    executorRunTime: of((t) => t.durationMs ?? 0),
    memoryBytesSpilled: of((t) => t.metrics?.memoryBytesSpilled ?? 0),
    diskBytesSpilled: of((t) => t.metrics?.diskBytesSpilled ?? 0),
    shuffleReadMetrics: {
      readBytes: of(
        (t) =>
          (t.metrics?.shuffleRead?.remoteBytesRead ?? 0) +
          (t.metrics?.shuffleRead?.localBytesRead ?? 0),
      ),
      readRecords: of((t) => t.metrics?.shuffleRead?.recordsRead ?? 0),
      fetchWaitTime: of((t) => t.metrics?.shuffleRead?.fetchWaitTimeMs ?? 0),
    },
    shuffleWriteMetrics: {
      writeBytes: of((t) => t.metrics?.shuffleWrite?.bytesWritten ?? 0),
      writeRecords: of((t) => t.metrics?.shuffleWrite?.recordsWritten ?? 0),
    },
  };
}
