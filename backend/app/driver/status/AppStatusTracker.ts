/**
 * The driver's view of its jobs and stages, kept from its listener bus (Spark's AppStatusListener,
 * read through SparkStatusTracker): what `wc.statusTracker()` answers and the console progress bar
 * draws. Active jobs and stages are kept whole; finished ones up to wick.ui.retainedJobs and
 * wick.ui.retainedStages, the oldest forgotten first, so that a long application's memory for them
 * stays bounded.
 */
import type { LiveListenerBus } from '../LiveListenerBus.js';

export type JobStatus = 'RUNNING' | 'SUCCEEDED' | 'FAILED';
export type StageStatus = 'ACTIVE' | 'COMPLETE' | 'FAILED';

/** A job (Spark's SparkJobInfo, with its times). */
export interface JobInfo {
  jobId: number;
  stageIds: number[];
  status: JobStatus;
  submissionTime: number;
  completionTime?: number;
  error?: string;
}

/** A stage, at its latest attempt (Spark's SparkStageInfo, with its status and times). */
export interface StageInfo {
  stageId: number;
  currentAttemptId: number;
  name: string;
  numTasks: number;
  numActiveTasks: number;
  numCompletedTasks: number;
  numFailedTasks: number;
  submissionTime: number;
  completionTime?: number;
  status: StageStatus;
  failureReason?: string;
}

export interface Retained {
  jobs: number;
  stages: number;
}

/** What a program reads of its jobs and stages (Spark's SparkStatusTracker): wc.statusTracker(). */
export interface StatusTracker {
  /** Running jobs' ids. */
  getActiveJobIds(): number[];
  /** Running stages' ids. */
  getActiveStageIds(): number[];
  getJobInfo(jobId: number): JobInfo | undefined;
  getStageInfo(stageId: number): StageInfo | undefined;
  /** Running stages, in the order they were submitted. */
  activeStages(): StageInfo[];
}

export class AppStatusTracker implements StatusTracker {
  private readonly jobs = new Map<number, JobInfo>();
  private readonly stages = new Map<number, StageInfo>();
  /** Finished entries of each map, counted as they finish: a job's end does not walk them all. */
  private finishedJobs = 0;
  private finishedStages = 0;
  private readonly unsubscribe: () => void;

  constructor(
    bus: LiveListenerBus,
    private readonly retained: Retained = { jobs: 1000, stages: 1000 },
  ) {
    const offs = [
      bus.on('WickListenerJobStart', (e) => {
        const before = this.jobs.get(e.jobId);
        if (before && jobEnded(before)) this.finishedJobs--;
        this.jobs.set(e.jobId, {
          jobId: e.jobId,
          stageIds: e.stageIds,
          status: 'RUNNING',
          submissionTime: e.time,
        });
      }),
      bus.on('WickListenerJobEnd', (e) => {
        const job = this.jobs.get(e.jobId);
        if (!job) return;
        if (job.status === 'RUNNING') this.finishedJobs++;
        job.status = e.result === 'JobSucceeded' ? 'SUCCEEDED' : 'FAILED';
        job.completionTime = e.time;
        if (e.error !== undefined) job.error = e.error;
        this.finishedJobs = trim(this.jobs, this.finishedJobs, this.retained.jobs, jobEnded);
      }),
      bus.on('WickListenerStageSubmitted', (e) => {
        // A new attempt starts its counts afresh (a rerun runs only missing partitions).
        const before = this.stages.get(e.stageId);
        if (before && stageEnded(before)) this.finishedStages--;
        this.stages.delete(e.stageId);
        this.stages.set(e.stageId, {
          stageId: e.stageId,
          currentAttemptId: e.stageAttemptId,
          name: e.name,
          numTasks: e.numTasks,
          numActiveTasks: 0,
          numCompletedTasks: 0,
          numFailedTasks: 0,
          submissionTime: e.time,
          status: 'ACTIVE',
        });
      }),
      bus.on('WickListenerStageCompleted', (e) => {
        const stage = this.current(e.stageId, e.stageAttemptId);
        if (!stage) return;
        if (stage.status === 'ACTIVE') this.finishedStages++;
        stage.status = e.failureReason === undefined ? 'COMPLETE' : 'FAILED';
        stage.completionTime = e.time;
        stage.numActiveTasks = 0;
        if (e.failureReason !== undefined) stage.failureReason = e.failureReason;
        this.finishedStages = trim(
          this.stages,
          this.finishedStages,
          this.retained.stages,
          stageEnded,
        );
      }),
      bus.on('WickListenerTaskStart', (e) => {
        const stage = this.current(e.stageId, e.stageAttemptId);
        if (stage?.status === 'ACTIVE') stage.numActiveTasks++;
      }),
      bus.on('WickListenerTaskEnd', (e) => {
        if (e.stageId === undefined || e.stageAttemptId === undefined) return;
        const stage = this.current(e.stageId, e.stageAttemptId);
        if (stage?.status !== 'ACTIVE') return;
        stage.numActiveTasks = Math.max(0, stage.numActiveTasks - 1);
        if (e.state === 'FINISHED') stage.numCompletedTasks++;
        else if (e.state === 'FAILED' || e.state === 'LOST') stage.numFailedTasks++;
      }),
    ];
    this.unsubscribe = () => {
      for (const off of offs) off();
    };
  }

  /** Running jobs' ids (Spark's getActiveJobIds). */
  getActiveJobIds(): number[] {
    return [...this.jobs.values()].filter((j) => j.status === 'RUNNING').map((j) => j.jobId);
  }

  /** Running stages' ids (Spark's getActiveStageIds). */
  getActiveStageIds(): number[] {
    return this.activeStages().map((s) => s.stageId);
  }

  getJobInfo(jobId: number): JobInfo | undefined {
    const j = this.jobs.get(jobId);
    return j && { ...j, stageIds: [...j.stageIds] };
  }

  getStageInfo(stageId: number): StageInfo | undefined {
    const s = this.stages.get(stageId);
    return s && { ...s };
  }

  /** Running stages, in the order they were submitted. */
  activeStages(): StageInfo[] {
    return [...this.stages.values()].filter((s) => s.status === 'ACTIVE').map((s) => ({ ...s }));
  }

  /** Jobs and stages kept (active ones and the retained finished ones). */
  get size(): { jobs: number; stages: number } {
    return { jobs: this.jobs.size, stages: this.stages.size };
  }

  stop(): void {
    this.unsubscribe();
  }

  private current(stageId: number, attempt: number): StageInfo | undefined {
    const s = this.stages.get(stageId);
    return s?.currentAttemptId === attempt ? s : undefined;
  }
}

const jobEnded = (j: JobInfo) => j.status !== 'RUNNING';
const stageEnded = (s: StageInfo) => s.status !== 'ACTIVE';

/**
 * Forgets the oldest finished entries past `max` (a Map iterates in insertion order), given how
 * many are finished; returns how many are left.
 */
function trim<T>(
  m: Map<number, T>,
  finishedCount: number,
  max: number,
  finished: (v: T) => boolean,
): number {
  let left = finishedCount;
  for (const [k, v] of m) {
    if (left <= max) break;
    if (finished(v)) {
      m.delete(k);
      left--;
    }
  }
  return left;
}
