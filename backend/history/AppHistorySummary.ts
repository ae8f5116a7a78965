/**
 * An application's jobs and stages as its events tell them, folded one event at a time (pure:
 * the events come from a log, a test, or at merge the live bus): what `wick history <app-id>` and
 * `wick status <app-id>` print. Spark's names for the states (JobExecutionStatus, StageStatus).
 * Bounded as the driver's status tracker is (wick.ui.retainedJobs / retainedStages): past the
 * bound the oldest finished job or stage is dropped, and the totals still count it.
 */
import type { WickListenerEvent } from '../protocol/listener.js';
import { assertNever } from '../shared/assertNever.js';

export type JobStatus = 'RUNNING' | 'SUCCEEDED' | 'FAILED';
export type StageStatus = 'ACTIVE' | 'COMPLETE' | 'FAILED' | 'SKIPPED';

export interface JobRow {
  jobId: number;
  status: JobStatus;
  stageIds: number[];
  submissionTime: number;
  completionTime?: number;
  error?: string;
}

export interface StageRow {
  stageId: number;
  attemptId: number;
  jobId: number | undefined;
  name: string;
  status: StageStatus;
  numTasks: number;
  numCompleteTasks: number;
  numFailedTasks: number;
  numKilledTasks: number;
  numActiveTasks: number;
  submissionTime?: number;
  completionTime?: number;
  failureReason?: string;
}

export interface AppHistorySummary {
  appId: string | undefined;
  name: string | undefined;
  user: string | undefined;
  startTime: number | undefined;
  endTime: number | undefined;
  failure: string | undefined;
  /** Oldest first; at most maxJobs. */
  jobs: JobRow[];
  /** By submission, each attempt its own row; at most maxStages. */
  stages: StageRow[];
  totals: {
    jobsSucceeded: number;
    jobsFailed: number;
    jobsRunning: number;
    stagesCompleted: number;
    stagesFailed: number;
    stagesSkipped: number;
    tasksCompleted: number;
    tasksFailed: number;
    executorsAdded: number;
    /** Jobs and stages dropped past the bounds. */
    jobsDropped: number;
    stagesDropped: number;
  };
}

export interface SummaryBounds {
  maxJobs: number;
  maxStages: number;
}

export class AppSummaryBuilder {
  private readonly jobs = new Map<number, JobRow>();
  /** Keyed `stageId:attemptId`, in submission order. */
  private readonly stages = new Map<string, StageRow>();
  private readonly summary: AppHistorySummary = {
    appId: undefined,
    name: undefined,
    user: undefined,
    startTime: undefined,
    endTime: undefined,
    failure: undefined,
    jobs: [],
    stages: [],
    totals: {
      jobsSucceeded: 0,
      jobsFailed: 0,
      jobsRunning: 0,
      stagesCompleted: 0,
      stagesFailed: 0,
      stagesSkipped: 0,
      tasksCompleted: 0,
      tasksFailed: 0,
      executorsAdded: 0,
      jobsDropped: 0,
      stagesDropped: 0,
    },
  };

  constructor(private readonly bounds: SummaryBounds) {}

  add(e: WickListenerEvent): void {
    const s = this.summary;
    const t = s.totals;
    switch (e.event) {
      case 'WickListenerApplicationStart':
        s.appId = e.appId;
        s.name = e.appName;
        s.user = e.user;
        s.startTime = e.time;
        return;
      case 'WickListenerApplicationEnd':
        s.endTime = e.time;
        s.failure = e.failure;
        return;
      case 'WickListenerJobStart': {
        if (this.jobs.has(e.jobId)) return;
        this.jobs.set(e.jobId, {
          jobId: e.jobId,
          status: 'RUNNING',
          stageIds: e.stageIds.slice(),
          submissionTime: e.time,
        });
        t.jobsRunning++;
        this.trimJobs();
        return;
      }
      case 'WickListenerJobEnd': {
        const job = this.jobs.get(e.jobId);
        if (job?.status !== 'RUNNING') return;
        t.jobsRunning--;
        job.status = e.result === 'JobSucceeded' ? 'SUCCEEDED' : 'FAILED';
        job.completionTime = e.time;
        if (e.error !== undefined) job.error = e.error;
        if (job.status === 'SUCCEEDED') t.jobsSucceeded++;
        else t.jobsFailed++;
        // A stage the job listed and never ran was skipped (its shuffle output was there).
        const ran = new Set([...this.stages.values()].map((st) => st.stageId));
        for (const id of job.stageIds) {
          if (ran.has(id)) continue;
          t.stagesSkipped++;
          this.addStage({
            stageId: id,
            attemptId: 0,
            jobId: job.jobId,
            name: '',
            status: 'SKIPPED',
            numTasks: 0,
            numCompleteTasks: 0,
            numFailedTasks: 0,
            numKilledTasks: 0,
            numActiveTasks: 0,
          });
        }
        this.trimJobs();
        return;
      }
      case 'WickListenerStageSubmitted': {
        const key = `${e.stageId}:${e.stageAttemptId}`;
        if (this.stages.has(key)) return;
        this.addStage({
          stageId: e.stageId,
          attemptId: e.stageAttemptId,
          jobId: e.jobId,
          name: e.name,
          status: 'ACTIVE',
          numTasks: e.numTasks,
          numCompleteTasks: 0,
          numFailedTasks: 0,
          numKilledTasks: 0,
          numActiveTasks: 0,
          submissionTime: e.time,
        });
        return;
      }
      case 'WickListenerStageCompleted': {
        const st = this.stages.get(`${e.stageId}:${e.stageAttemptId}`);
        if (st?.status !== 'ACTIVE') return;
        st.completionTime = e.time;
        if (e.failureReason !== undefined) {
          st.status = 'FAILED';
          st.failureReason = e.failureReason;
          t.stagesFailed++;
        } else {
          st.status = 'COMPLETE';
          t.stagesCompleted++;
        }
        st.numActiveTasks = 0;
        this.trimStages();
        return;
      }
      case 'WickListenerTaskStart': {
        const st = this.stages.get(`${e.stageId}:${e.stageAttemptId}`);
        if (st) st.numActiveTasks++;
        return;
      }
      case 'WickListenerTaskEnd': {
        if (e.state === 'FINISHED') t.tasksCompleted++;
        else if (e.state !== 'KILLED') t.tasksFailed++;
        if (e.stageId === undefined) return;
        const st = this.stages.get(`${e.stageId}:${e.stageAttemptId ?? 0}`);
        if (!st) return;
        st.numActiveTasks = Math.max(0, st.numActiveTasks - 1);
        if (e.state === 'FINISHED') st.numCompleteTasks++;
        else if (e.state === 'KILLED') st.numKilledTasks++;
        else st.numFailedTasks++;
        return;
      }
      case 'WickListenerExecutorAdded':
        t.executorsAdded++;
        return;
      case 'WickListenerExecutorRemoved':
      case 'WickListenerWorkerRemoved':
      // The environment is /api/v1's (appstatus), not a summary's.
      case 'WickListenerEnvironmentUpdate':
        return;
      default:
        assertNever(e, 'listener event');
    }
  }

  result(): AppHistorySummary {
    return {
      ...this.summary,
      jobs: [...this.jobs.values()].map((j) => ({ ...j, stageIds: j.stageIds.slice() })),
      stages: [...this.stages.values()].map((st) => ({ ...st })),
      totals: { ...this.summary.totals },
    };
  }

  private addStage(row: StageRow): void {
    this.stages.set(`${row.stageId}:${row.attemptId}`, row);
    this.trimStages();
  }

  /** Drops the oldest finished jobs past the bound; running ones always stay. */
  private trimJobs(): void {
    if (this.jobs.size <= this.bounds.maxJobs) return;
    for (const [id, job] of this.jobs) {
      if (this.jobs.size <= this.bounds.maxJobs) return;
      if (job.status === 'RUNNING') continue;
      this.jobs.delete(id);
      this.summary.totals.jobsDropped++;
    }
  }

  private trimStages(): void {
    if (this.stages.size <= this.bounds.maxStages) return;
    for (const [key, st] of this.stages) {
      if (this.stages.size <= this.bounds.maxStages) return;
      if (st.status === 'ACTIVE') continue;
      this.stages.delete(key);
      this.summary.totals.stagesDropped++;
    }
  }
}
