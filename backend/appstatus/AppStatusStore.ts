/**
 * An application's jobs, stages (each attempt apart), tasks, executors and environment, built from
 * its listener events (Spark's AppStatusListener writing its AppStatusStore): whoever has the
 * events builds one — the master from its drivers' reports, a history server from event logs.
 * Pure: no I/O, no clock (times are the events'), so every process builds the same store.
 *
 * Memory is bounded as Spark bounds its UI: finished jobs and stage attempts past
 * wick.ui.retainedJobs and wick.ui.retainedStages, the tasks of a stage attempt past
 * wick.ui.retainedTasks and dead executors past wick.ui.retainedDeadExecutors are forgotten, the
 * oldest finished first; running ones are kept (and capped, for a store fed by a peer, by
 * `check`). Counts stay exact when rows go: they are kept on the job, stage and executor.
 */
import type { WickListenerEvent, WickListenerTaskEnd } from '../protocol/listener.js';
import type { TaskEndsCoalesced } from '../protocol/statusReport.js';
import type { TaskMetrics } from '../protocol/task.js';

export type JobStatus = 'RUNNING' | 'SUCCEEDED' | 'FAILED';
export type StageStatus = 'ACTIVE' | 'COMPLETE' | 'FAILED';
/** Spark's TaskData.status values. */
export type TaskStatus = 'RUNNING' | 'SUCCESS' | 'FAILED' | 'KILLED';

export interface Retention {
  jobs: number;
  stages: number;
  /** Per stage attempt, as Spark's spark.ui.retainedTasks. */
  tasks: number;
  deadExecutors: number;
}

/** Spark's defaults (spark.ui.retainedJobs, …Stages, …Tasks, …DeadExecutors). */
export const DEFAULT_RETENTION: Retention = {
  jobs: 1000,
  stages: 1000,
  tasks: 100_000,
  deadExecutors: 100,
};

export interface AppInfo {
  appId?: string;
  appName?: string;
  user?: string;
  startTime?: number;
  endTime?: number;
  failure?: string;
}

export interface Environment {
  runtime: { nodeVersion: string; platform: string; wickVersion: string };
  wickProperties: [string, string][];
}

export interface LiveJob {
  jobId: number;
  stageIds: number[];
  status: JobStatus;
  submissionTime: number;
  completionTime?: number;
  error?: string;
  /** Stage attempts it submitted, and how they ended. */
  submittedStages: Set<number>;
  completedStages: Set<number>;
  numFailedStages: number;
  numSkippedStages: number;
  numSkippedTasks: number;
  counts: TaskCounts;
}

export interface TaskCounts {
  numTasks: number;
  numActiveTasks: number;
  numCompletedTasks: number;
  numFailedTasks: number;
  numKilledTasks: number;
}

export interface StageTotals {
  executorRunTime: number;
  shuffleReadBytes: number;
  shuffleReadRecords: number;
  shuffleRemoteBytesRead: number;
  shuffleLocalBytesRead: number;
  shuffleWriteBytes: number;
  shuffleWriteRecords: number;
  memoryBytesSpilled: number;
  diskBytesSpilled: number;
}

export interface LiveStage {
  stageId: number;
  attemptId: number;
  name: string;
  status: StageStatus;
  jobIds: number[];
  submissionTime: number;
  firstTaskLaunchedTime?: number;
  completionTime?: number;
  failureReason?: string;
  /** The stages it reads the shuffle output of (the job page's DAG), when its driver said. */
  parentIds?: number[];
  counts: TaskCounts;
  totals: StageTotals;
  /** Its tasks by id, in launch order (up to Retention.tasks). */
  tasks: Map<number, LiveTask>;
}

export interface LiveTask {
  taskId: number;
  index: number;
  attempt: number;
  launchTime: number;
  executorId: string;
  status: TaskStatus;
  durationMs?: number;
  errorMessage?: string;
  metrics?: TaskMetrics;
}

export interface LiveExecutor {
  id: string;
  host: string;
  cores: number;
  isActive: boolean;
  addTime?: number;
  removeTime?: number;
  removeReason?: string;
  activeTasks: number;
  completedTasks: number;
  failedTasks: number;
  totalDurationMs: number;
  totalShuffleRead: number;
  totalShuffleWrite: number;
}

/** Bounds on what is running at once, for a store fed by a peer (see check). */
export interface ActiveCaps {
  jobs: number;
  stages: number;
  executors: number;
}

const stageKey = (stageId: number, attempt: number) => `${stageId}:${attempt}`;

export class AppStatusStore {
  readonly app: AppInfo = {};
  environment: Environment | undefined;
  /** Insertion order is start order: the oldest first. */
  private readonly jobs = new Map<number, LiveJob>();
  private readonly stageAttempts = new Map<string, LiveStage>();
  private readonly executorMap = new Map<string, LiveExecutor>();
  private finishedJobs = 0;
  private finishedStages = 0;
  private deadExecutors = 0;
  /** The time of the latest event that carried one (Spark's lastUpdated). */
  lastUpdated = 0;
  /**
   * The stage attempt a task event found last: a stage's tasks come one after another, and this
   * spares each of them a key made and looked up. Forgotten when that attempt is.
   */
  private lastStage: LiveStage | undefined;

  constructor(readonly retention: Retention = DEFAULT_RETENTION) {}

  /** Applies one event. Events about jobs or stages it does not know (forgotten) change nothing. */
  post(e: WickListenerEvent): void {
    // A task's start and end first: a switch tries its cases in order, and these are most events.
    switch (e.event) {
      case 'WickListenerTaskStart':
        this.taskStart(e);
        return;
      case 'WickListenerTaskEnd':
        this.taskEnd(e);
        return;
      case 'WickListenerApplicationStart':
        Object.assign(this.app, {
          appId: e.appId,
          appName: e.appName,
          user: e.user,
          startTime: e.time,
        });
        this.touch(e.time);
        return;
      case 'WickListenerApplicationEnd':
        this.app.endTime = e.time;
        if (e.failure !== undefined) this.app.failure = e.failure;
        this.touch(e.time);
        return;
      case 'WickListenerEnvironmentUpdate':
        this.environment = {
          runtime: { ...e.runtime },
          wickProperties: e.wickProperties.map(({ key, value }) => [key, value]),
        };
        return;
      case 'WickListenerJobStart':
        this.jobStart(e.jobId, e.stageIds, e.time);
        return;
      case 'WickListenerJobEnd':
        this.jobEnd(e.jobId, e.result === 'JobSucceeded', e.time, e.error);
        return;
      case 'WickListenerStageSubmitted':
        this.stageSubmitted(e);
        return;
      case 'WickListenerStageCompleted':
        this.stageCompleted(e.stageId, e.stageAttemptId, e.time, e.failureReason);
        return;
      case 'WickListenerExecutorAdded':
        this.executorAdded(e.executorId, e.host, e.cores);
        return;
      case 'WickListenerExecutorRemoved':
        this.executorRemoved(e.executorId, e.reason);
        return;
      case 'WickListenerWorkerRemoved':
        return;
    }
  }

  /** Applies tasks reported as counts and sums (statusReport.ts), not one by one. */
  postCoalesced(c: TaskEndsCoalesced): void {
    const stage = this.stageAttempt(c.stageId, c.stageAttemptId);
    const ended = c.finished + c.failed + c.killed;
    if (stage) {
      addCoalesced(stage.counts, c, ended);
      const t = stage.totals;
      t.executorRunTime += c.executorRunTimeMs;
      t.shuffleReadBytes += c.shuffleReadBytes;
      t.shuffleReadRecords += c.shuffleReadRecords;
      t.shuffleWriteBytes += c.shuffleWriteBytes;
      t.shuffleWriteRecords += c.shuffleWriteRecords;
      t.memoryBytesSpilled += c.memoryBytesSpilled;
      t.diskBytesSpilled += c.diskBytesSpilled;
      for (const jobId of stage.jobIds) {
        const job = this.jobs.get(jobId);
        if (job) addCoalesced(job.counts, c, ended);
      }
    }
    const exec = this.executorMap.get(c.executorId);
    if (exec) {
      exec.activeTasks = Math.max(0, exec.activeTasks + c.started - ended);
      exec.completedTasks += c.finished;
      exec.failedTasks += c.failed;
      exec.totalDurationMs += c.executorRunTimeMs;
      exec.totalShuffleRead += c.shuffleReadBytes;
      exec.totalShuffleWrite += c.shuffleWriteBytes;
    }
  }

  /**
   * Why applying `events` would take what runs at once past `caps` (a bound named, for a refusal),
   * or undefined: checked before a peer's report is applied, so that a refused report changes
   * nothing.
   */
  check(events: readonly WickListenerEvent[], caps: ActiveCaps): string | undefined {
    let jobs = this.activeJobCount();
    let stages = this.activeStageCount();
    let executors = this.executorMap.size - this.deadExecutors;
    const startedJobs = new Set<number>();
    const startedStages = new Set<string>();
    const added = new Set<string>();
    for (const e of events) {
      // Most of a report: they change none of the counts checked here.
      if (e.event === 'WickListenerTaskStart' || e.event === 'WickListenerTaskEnd') continue;
      if (e.event === 'WickListenerJobStart') {
        if (!this.jobs.has(e.jobId) && !startedJobs.has(e.jobId)) jobs++;
        startedJobs.add(e.jobId);
      } else if (e.event === 'WickListenerJobEnd') {
        if (startedJobs.delete(e.jobId) || this.jobs.get(e.jobId)?.status === 'RUNNING') jobs--;
      } else if (e.event === 'WickListenerStageSubmitted') {
        const k = stageKey(e.stageId, e.stageAttemptId);
        if (!this.stageAttempts.has(k) && !startedStages.has(k)) stages++;
        startedStages.add(k);
      } else if (e.event === 'WickListenerStageCompleted') {
        const k = stageKey(e.stageId, e.stageAttemptId);
        if (startedStages.delete(k) || this.stageAttempts.get(k)?.status === 'ACTIVE') stages--;
      } else if (e.event === 'WickListenerExecutorAdded') {
        if (!this.executorMap.get(e.executorId)?.isActive && !added.has(e.executorId)) executors++;
        added.add(e.executorId);
      } else if (e.event === 'WickListenerExecutorRemoved') {
        if (added.delete(e.executorId) || this.executorMap.get(e.executorId)?.isActive) executors--;
      }
      if (jobs > caps.jobs) return `more than ${caps.jobs} jobs running at once`;
      if (stages > caps.stages) return `more than ${caps.stages} stage attempts running at once`;
      if (executors > caps.executors) return `more than ${caps.executors} executors at once`;
    }
    return undefined;
  }

  /**
   * The application ended without saying (its driver died before its ApplicationEnd): its owner
   * (the master, which saw it end) records when.
   */
  endedAt(time: number): void {
    if (this.app.endTime === undefined) this.app.endTime = time;
  }

  // Reading

  /** Jobs, the most recent first (as Spark lists them). */
  jobList(): LiveJob[] {
    return [...this.jobs.values()].reverse();
  }

  job(jobId: number): LiveJob | undefined {
    return this.jobs.get(jobId);
  }

  /** Stage attempts, the most recent first. */
  stageList(): LiveStage[] {
    return [...this.stageAttempts.values()].reverse();
  }

  /** A stage's attempts, the latest first. */
  stageAttemptsOf(stageId: number): LiveStage[] {
    return this.stageList().filter((s) => s.stageId === stageId);
  }

  stage(stageId: number, attempt: number): LiveStage | undefined {
    return this.stageAttempts.get(stageKey(stageId, attempt));
  }

  executors(): LiveExecutor[] {
    return [...this.executorMap.values()];
  }

  activeJobCount(): number {
    return this.jobs.size - this.finishedJobs;
  }

  activeStageCount(): number {
    return this.stageAttempts.size - this.finishedStages;
  }

  /** What is kept, for tests and for a master's memory report. */
  get size(): { jobs: number; stages: number; tasks: number; executors: number } {
    let tasks = 0;
    for (const s of this.stageAttempts.values()) tasks += s.tasks.size;
    return {
      jobs: this.jobs.size,
      stages: this.stageAttempts.size,
      tasks,
      executors: this.executorMap.size,
    };
  }

  // Events

  /** A stage attempt kept, by its ids (stage() without the key made when it is the last one). */
  private stageAttempt(stageId: number, attempt: number): LiveStage | undefined {
    const last = this.lastStage;
    if (last !== undefined && last.stageId === stageId && last.attemptId === attempt) return last;
    const stage = this.stageAttempts.get(stageKey(stageId, attempt));
    if (stage) this.lastStage = stage;
    return stage;
  }

  private touch(time: number): void {
    if (time > this.lastUpdated) this.lastUpdated = time;
  }

  private jobStart(jobId: number, stageIds: number[], time: number): void {
    if (this.jobs.has(jobId)) return;
    this.jobs.set(jobId, {
      jobId,
      stageIds: [...stageIds],
      status: 'RUNNING',
      submissionTime: time,
      submittedStages: new Set(),
      completedStages: new Set(),
      numFailedStages: 0,
      numSkippedStages: 0,
      numSkippedTasks: 0,
      counts: zeroCounts(),
    });
    this.touch(time);
  }

  private jobEnd(jobId: number, succeeded: boolean, time: number, error?: string): void {
    const job = this.jobs.get(jobId);
    if (job?.status !== 'RUNNING') return;
    job.status = succeeded ? 'SUCCEEDED' : 'FAILED';
    job.completionTime = time;
    if (error !== undefined) job.error = error;
    // A stage of the job it never submitted was skipped: its output was there already.
    job.numSkippedStages = job.stageIds.filter((id) => !job.submittedStages.has(id)).length;
    job.counts.numActiveTasks = 0;
    this.finishedJobs++;
    this.touch(time);
    this.trimJobs();
  }

  private stageSubmitted(e: WickListenerEvent & { event: 'WickListenerStageSubmitted' }): void {
    const k = stageKey(e.stageId, e.stageAttemptId);
    if (this.stageAttempts.has(k)) return;
    this.stageAttempts.set(k, {
      stageId: e.stageId,
      attemptId: e.stageAttemptId,
      name: e.name,
      status: 'ACTIVE',
      jobIds: [e.jobId],
      submissionTime: e.time,
      counts: { ...zeroCounts(), numTasks: e.numTasks },
      totals: zeroTotals(),
      tasks: new Map(),
      ...(e.parentIds !== undefined ? { parentIds: [...e.parentIds] } : {}),
    });
    const job = this.jobs.get(e.jobId);
    if (job) {
      job.submittedStages.add(e.stageId);
      job.counts.numTasks += e.numTasks;
    }
    this.touch(e.time);
  }

  private stageCompleted(id: number, attempt: number, time: number, failure?: string): void {
    const stage = this.stageAttempts.get(stageKey(id, attempt));
    if (stage?.status !== 'ACTIVE') return;
    stage.status = failure === undefined ? 'COMPLETE' : 'FAILED';
    stage.completionTime = time;
    stage.counts.numActiveTasks = 0;
    if (failure !== undefined) stage.failureReason = failure;
    for (const jobId of stage.jobIds) {
      const job = this.jobs.get(jobId);
      if (!job) continue;
      if (failure === undefined) job.completedStages.add(id);
      else job.numFailedStages++;
    }
    this.finishedStages++;
    this.touch(time);
    this.trimStages();
  }

  private taskStart(e: WickListenerEvent & { event: 'WickListenerTaskStart' }): void {
    const stage = this.stageAttempt(e.stageId, e.stageAttemptId);
    if (stage) {
      stage.firstTaskLaunchedTime ??= e.time;
      stage.counts.numActiveTasks++;
      for (const jobId of stage.jobIds) {
        const job = this.jobs.get(jobId);
        if (job) job.counts.numActiveTasks++;
      }
      if (stage.tasks.size >= this.retention.tasks) trimTasks(stage, this.retention.tasks - 1);
      if (stage.tasks.size < this.retention.tasks) {
        stage.tasks.set(e.taskId, {
          taskId: e.taskId,
          index: e.index,
          attempt: e.attempt,
          launchTime: e.time,
          executorId: e.executorId,
          status: 'RUNNING',
        });
      }
    }
    const exec = this.executorMap.get(e.executorId);
    if (exec) exec.activeTasks++;
    this.touch(e.time);
  }

  private taskEnd(e: WickListenerTaskEnd): void {
    const status: TaskStatus =
      e.state === 'FINISHED' ? 'SUCCESS' : e.state === 'KILLED' ? 'KILLED' : 'FAILED';
    const m = e.metrics;
    const stage =
      e.stageId === undefined || e.stageAttemptId === undefined
        ? undefined
        : this.stageAttempt(e.stageId, e.stageAttemptId);
    if (stage) {
      countEnd(stage.counts, status);
      addMetrics(stage.totals, e.durationMs ?? 0, m);
      for (const jobId of stage.jobIds) {
        const job = this.jobs.get(jobId);
        if (job) countEnd(job.counts, status);
      }
      const task = stage.tasks.get(e.taskId);
      if (task) {
        task.status = status;
        if (e.durationMs !== undefined) task.durationMs = e.durationMs;
        if (m) task.metrics = m;
        if (e.error !== undefined) task.errorMessage = e.error;
      }
    }
    const exec = this.executorMap.get(e.executorId);
    if (exec) {
      exec.activeTasks = Math.max(0, exec.activeTasks - 1);
      if (status === 'SUCCESS') exec.completedTasks++;
      else if (status === 'FAILED') exec.failedTasks++;
      exec.totalDurationMs += e.durationMs ?? 0;
      exec.totalShuffleRead += m?.shuffleRead
        ? m.shuffleRead.localBytesRead + m.shuffleRead.remoteBytesRead
        : 0;
      exec.totalShuffleWrite += m?.shuffleWrite?.bytesWritten ?? 0;
    }
  }

  private executorAdded(id: string, host: string, cores: number): void {
    const old = this.executorMap.get(id);
    if (old && !old.isActive) this.deadExecutors--;
    this.executorMap.set(id, {
      id,
      host,
      cores,
      isActive: true,
      ...(this.lastUpdated ? { addTime: this.lastUpdated } : {}),
      activeTasks: 0,
      completedTasks: 0,
      failedTasks: 0,
      totalDurationMs: 0,
      totalShuffleRead: 0,
      totalShuffleWrite: 0,
    });
  }

  private executorRemoved(id: string, reason: string): void {
    const exec = this.executorMap.get(id);
    if (!exec?.isActive) return;
    exec.isActive = false;
    exec.activeTasks = 0;
    exec.removeReason = reason;
    if (this.lastUpdated) exec.removeTime = this.lastUpdated;
    this.deadExecutors++;
    let over = this.deadExecutors - this.retention.deadExecutors;
    for (const [k, v] of this.executorMap) {
      if (over <= 0) break;
      if (!v.isActive) {
        this.executorMap.delete(k);
        this.deadExecutors--;
        over--;
      }
    }
  }

  private trimJobs(): void {
    let over = this.finishedJobs - this.retention.jobs;
    for (const [k, v] of this.jobs) {
      if (over <= 0) break;
      if (v.status !== 'RUNNING') {
        this.jobs.delete(k);
        this.finishedJobs--;
        over--;
      }
    }
  }

  private trimStages(): void {
    let over = this.finishedStages - this.retention.stages;
    for (const [k, v] of this.stageAttempts) {
      if (over <= 0) break;
      if (v.status !== 'ACTIVE') {
        this.stageAttempts.delete(k);
        if (this.lastStage === v) this.lastStage = undefined;
        this.finishedStages--;
        over--;
      }
    }
  }
}

/** Forgets a stage's oldest finished tasks until it keeps `max` (running ones are kept). */
function trimTasks(stage: LiveStage, max: number): void {
  let over = stage.tasks.size - max;
  for (const [k, t] of stage.tasks) {
    if (over <= 0) return;
    if (t.status !== 'RUNNING') {
      stage.tasks.delete(k);
      over--;
    }
  }
}

/** Counts a task's end (its status) in a stage's or a job's counts. */
function countEnd(n: TaskCounts, status: TaskStatus): void {
  n.numActiveTasks = Math.max(0, n.numActiveTasks - 1);
  if (status === 'SUCCESS') n.numCompletedTasks++;
  else if (status === 'KILLED') n.numKilledTasks++;
  else n.numFailedTasks++;
}

/** Counts tasks reported as counts (`ended` of them ended) in a stage's or a job's counts. */
function addCoalesced(n: TaskCounts, c: TaskEndsCoalesced, ended: number): void {
  n.numActiveTasks = Math.max(0, n.numActiveTasks + c.started - ended);
  n.numCompletedTasks += c.finished;
  n.numFailedTasks += c.failed;
  n.numKilledTasks += c.killed;
}

function zeroCounts(): TaskCounts {
  return {
    numTasks: 0,
    numActiveTasks: 0,
    numCompletedTasks: 0,
    numFailedTasks: 0,
    numKilledTasks: 0,
  };
}

function zeroTotals(): StageTotals {
  return {
    executorRunTime: 0,
    shuffleReadBytes: 0,
    shuffleReadRecords: 0,
    shuffleRemoteBytesRead: 0,
    shuffleLocalBytesRead: 0,
    shuffleWriteBytes: 0,
    shuffleWriteRecords: 0,
    memoryBytesSpilled: 0,
    diskBytesSpilled: 0,
  };
}

function addMetrics(t: StageTotals, durationMs: number, m: TaskMetrics | undefined): void {
  t.executorRunTime += durationMs;
  if (!m) return;
  if (m.shuffleRead) {
    const r = m.shuffleRead;
    t.shuffleLocalBytesRead += r.localBytesRead;
    t.shuffleRemoteBytesRead += r.remoteBytesRead;
    t.shuffleReadBytes += r.localBytesRead + r.remoteBytesRead;
    t.shuffleReadRecords += r.recordsRead;
  }
  if (m.shuffleWrite) {
    t.shuffleWriteBytes += m.shuffleWrite.bytesWritten;
    t.shuffleWriteRecords += m.shuffleWrite.recordsWritten;
  }
  t.memoryBytesSpilled += m.memoryBytesSpilled ?? 0;
  t.diskBytesSpilled += m.diskBytesSpilled ?? 0;
}
