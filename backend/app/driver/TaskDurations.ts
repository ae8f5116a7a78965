/** Weight of the newest duration in a job's running average. */
const DURATION_EWMA_WEIGHT = 0.2;

/**
 * How long each running job's tasks take, as a running average of its finished tasks' durations
 * (ms): what the prefetch policy sizes queues by. A job is listed from its first finished task
 * until it ends.
 */
export class TaskDurations {
  private readonly byJob = new Map<number, number>();

  get size(): number {
    return this.byJob.size;
  }

  /** A task of the job finished in `ms`. */
  note(jobId: number, ms: number): void {
    const avg = this.byJob.get(jobId);
    this.byJob.set(jobId, avg === undefined ? ms : avg + DURATION_EWMA_WEIGHT * (ms - avg));
  }

  /** The jobs with an average, in the order of their first finished task, and their averages. */
  entries(): IterableIterator<[jobId: number, ms: number]> {
    return this.byJob.entries();
  }

  /** The shortest average of the running jobs' (Infinity when there is none). */
  shortest(): number {
    let min = Number.POSITIVE_INFINITY;
    for (const ms of this.byJob.values()) if (ms < min) min = ms;
    return min;
  }

  jobEnded(jobId: number): void {
    this.byJob.delete(jobId);
  }
}
