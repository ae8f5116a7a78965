/**
 * The task whose failures failed a run's job, read from its event log: what Debug Failed Task
 * reruns for a run its master no longer keeps (for a live one, the driver tells the master in
 * AppFailure.task). Spark's rule: a job is aborted once one of its tasks has failed
 * wick.task.maxFailures times, so that task's last FAILED TaskEnd comes before its job's
 * JobFailed. When several jobs failed, the last one is taken: an application that caught the
 * first failure and went on was ended by a later one.
 *
 * Pure: fed a replay's events in order (HistoryProvider.forEachEvent), it keeps only the jobs
 * under way, each with its stages and its last failed task, so a long log costs no more memory
 * than its widest moment.
 */
import type { WickListenerEvent } from '../protocol/listener.js';
import type { LoggedFailedTask } from './protocol.js';

type TaskFailure = Omit<LoggedFailedTask, 'jobId' | 'jobError'>;

export class FailedTaskFinder {
  /** The job of each stage of the jobs under way (a TaskEnd may not name its job). */
  private readonly jobOfStage = new Map<number, number>();
  private readonly stagesOfJob = new Map<number, number[]>();
  /** Per job under way: its last failed task, and how often each partition failed. */
  private readonly lastFailure = new Map<number, TaskFailure>();
  private readonly failures = new Map<string, number>();
  private found: LoggedFailedTask | undefined;

  post(e: WickListenerEvent): void {
    switch (e.event) {
      case 'WickListenerJobStart':
        this.stagesOfJob.set(e.jobId, e.stageIds);
        for (const s of e.stageIds) this.jobOfStage.set(s, e.jobId);
        return;
      case 'WickListenerStageSubmitted':
        if (!this.jobOfStage.has(e.stageId)) {
          this.jobOfStage.set(e.stageId, e.jobId);
          this.stagesOfJob.set(e.jobId, [...(this.stagesOfJob.get(e.jobId) ?? []), e.stageId]);
        }
        return;
      case 'WickListenerTaskEnd': {
        if (e.state !== 'FAILED' || e.stageId === undefined || e.index === undefined) return;
        const jobId = e.jobId ?? this.jobOfStage.get(e.stageId);
        if (jobId === undefined) return;
        const key = `${jobId}:${e.stageId}:${e.index}`;
        const failures = (this.failures.get(key) ?? 0) + 1;
        this.failures.set(key, failures);
        this.lastFailure.set(jobId, {
          stageId: e.stageId,
          stageAttemptId: e.stageAttemptId ?? 0,
          partitionId: e.index,
          taskId: e.taskId,
          executorId: e.executorId,
          failures,
          error: e.error ?? 'The task failed without an error logged',
        });
        return;
      }
      case 'WickListenerJobEnd': {
        const failed = this.lastFailure.get(e.jobId);
        if (e.result === 'JobFailed' && failed)
          this.found = {
            jobId: e.jobId,
            ...failed,
            ...(e.error !== undefined ? { jobError: e.error } : {}),
          };
        this.forget(e.jobId);
        return;
      }
      default:
        return;
    }
  }

  /** The last failed job's failing task; undefined when no job failed because of a task. */
  get result(): LoggedFailedTask | undefined {
    return this.found;
  }

  private forget(jobId: number): void {
    for (const s of this.stagesOfJob.get(jobId) ?? [])
      if (this.jobOfStage.get(s) === jobId) this.jobOfStage.delete(s);
    this.stagesOfJob.delete(jobId);
    this.lastFailure.delete(jobId);
    const prefix = `${jobId}:`;
    for (const k of [...this.failures.keys()]) if (k.startsWith(prefix)) this.failures.delete(k);
  }
}
