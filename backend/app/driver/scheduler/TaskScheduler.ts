import type { FailedTask } from '../../../protocol/common.js';
import type {
  PartitionAction,
  PartitionSource,
  TaskDescription,
  TaskError,
  Transformation,
} from '../../../protocol/task.js';

/**
 * Which task runs where, and what a job's tasks came to (Spark's TaskSchedulerImpl and
 * TaskSetManager, for one-stage jobs). Pure bookkeeping: no I/O and no timers, so that retries,
 * lost executors and aborts can be tested directly; the DriverEndpoint feeds it offers and status
 * updates and sends what it returns.
 */

export interface JobSpec {
  sources: PartitionSource[];
  transformations: Transformation[];
  action: PartitionAction;
  /** Each task's own transformations, when they differ (a union's): else `transformations`. */
  partitionTransformations?: Transformation[][];
  /** The partition each source is (a stage that reruns some of its partitions): else its index. */
  partitions?: number[];
  /** The DAGScheduler's stage attempt this task set runs, for what the bus is told of its tasks. */
  stage?: { stageId: number; stageAttemptId: number };
}

interface TaskRecord {
  taskId: number;
  partition: number;
  attempt: number;
  executorId: string;
}

interface JobState {
  jobId: number;
  spec: JobSpec;
  results: unknown[];
  done: boolean[];
  remaining: number;
  failures: number[];
  /** Executors each partition failed on, so a retry prefers another. */
  failedOn: Set<string>[];
  /**
   * Partitions waiting to run, first to run first, from `pendingHead` on: taking from the head
   * moves an index (Array.shift is a copy of the whole array once it is large, as a job of
   * 20,000 partitions makes it).
   */
  pending: number[];
  pendingHead: number;
  resolve: (results: unknown[]) => void;
  reject: (err: Error) => void;
}

/** A task that was running on an executor when it was lost. */
export type LostTask = TaskRecord & { jobId: number };

export interface Offer {
  executorId: string;
  freeCores: number;
}

export class TaskScheduler {
  private nextJobId = 0;
  private nextTaskId = 0;
  private readonly jobs = new Map<number, JobState>();
  private readonly running = new Map<number, TaskRecord & { jobId: number }>();

  constructor(private readonly maxFailures: number) {}

  get hasPending(): boolean {
    for (const j of this.jobs.values()) if (j.pending.length > j.pendingHead) return true;
    return false;
  }

  /** The executor a running task was launched on. */
  executorOf(taskId: number): string | undefined {
    return this.running.get(taskId)?.executorId;
  }

  get runningCount(): number {
    return this.running.size;
  }

  /** Adds a job; the promise settles with every partition's result, in partition order. */
  submit(spec: JobSpec): { jobId: number; done: Promise<unknown[]> } {
    const jobId = this.nextJobId++;
    const n = spec.sources.length;
    let resolve!: (r: unknown[]) => void;
    let reject!: (e: Error) => void;
    const done = new Promise<unknown[]>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    if (n === 0) {
      resolve([]);
      return { jobId, done };
    }
    this.jobs.set(jobId, {
      jobId,
      spec,
      results: new Array(n),
      done: new Array(n).fill(false),
      remaining: n,
      failures: new Array(n).fill(0),
      failedOn: Array.from({ length: n }, () => new Set<string>()),
      pending: Array.from({ length: n }, (_, i) => i),
      pendingHead: 0,
      resolve,
      reject,
    });
    return { jobId, done };
  }

  /**
   * Fills the offered cores with pending tasks, jobs in order, round robin over the offers as
   * Spark's resourceOfferSingleTaskSet does: one task to each offer with a free core, then again,
   * so that tasks spread over executors rather than filling the first (a prefetch's queue slots
   * are offers of hundreds: first fit queued a whole job on one executor, and the end of the job
   * then took half of them back). A task that failed on an executor goes elsewhere when another
   * offer can take it. `accept`, when given, limits the offer to the jobs it accepts (the
   * driver's prefetch offers queue slots only to jobs of short tasks).
   */
  resourceOffers(
    offers: Offer[],
    accept?: (jobId: number) => boolean,
  ): { executorId: string; task: TaskDescription }[] {
    const out: { executorId: string; task: TaskDescription }[] = [];
    const ids = offers.map((o) => o.executorId);
    const free = offers.map((o) => Math.max(0, o.freeCores));
    const n = free.length;
    let left = free.reduce((a, b) => a + b, 0);
    /** The offer whose turn it is. */
    let next = 0;
    for (const job of this.jobs.values()) {
      if (accept && !accept(job.jobId)) continue;
      while (job.pending.length > job.pendingHead) {
        if (left === 0) return out;
        const partition = job.pending[job.pendingHead] as number;
        const failedOn = job.failedOn[partition] as Set<string>;
        // The next offer with a free core from its turn on; one the task has not failed on if any.
        let pick = -1;
        let anyFree = -1;
        for (let j = 0; j < n; j++) {
          const k = next + j < n ? next + j : next + j - n;
          if ((free[k] as number) === 0) continue;
          if (anyFree < 0) anyFree = k;
          if (failedOn.size === 0 || !failedOn.has(ids[k] as string)) {
            pick = k;
            break;
          }
        }
        if (pick < 0) pick = anyFree;
        const executorId = ids[pick] as string;
        free[pick] = (free[pick] as number) - 1;
        left--;
        next = pick + 1 === n ? 0 : pick + 1;
        job.pendingHead++;
        const task = this.describe(job, partition);
        this.running.set(task.taskId, {
          taskId: task.taskId,
          partition,
          attempt: task.attempt,
          executorId,
          jobId: job.jobId,
        });
        out.push({ executorId, task });
      }
    }
    return out;
  }

  /** A task finished: store its result, and settle the job when it was the last. */
  taskFinished(taskId: number, result: unknown): { executorId: string } | undefined {
    const t = this.running.get(taskId);
    if (!t) return undefined;
    this.running.delete(taskId);
    const job = this.jobs.get(t.jobId);
    if (!job || job.done[t.partition]) return { executorId: t.executorId };
    job.done[t.partition] = true;
    job.results[t.partition] = result;
    if (--job.remaining === 0) {
      this.jobs.delete(job.jobId);
      job.resolve(job.results);
    }
    return { executorId: t.executorId };
  }

  /**
   * A task failed: retry it, or abort its job after wick.task.maxFailures attempts. When the job
   * is aborted, `toKill` lists its other tasks that still run (Spark cancels them too).
   */
  taskFailed(
    taskId: number,
    error: TaskError,
  ): { executorId: string; toKill: { taskId: number; executorId: string }[] } | undefined {
    const t = this.running.get(taskId);
    if (!t) return undefined;
    this.running.delete(taskId);
    const job = this.jobs.get(t.jobId);
    if (!job || job.done[t.partition]) return { executorId: t.executorId, toKill: [] };
    if (error.fetchFailed) {
      // Not the task's fault, and no retry of it helps: the stage's parent must run again first.
      // The partitions done keep their results: only the others run again (Spark's resubmit).
      const finished = new Map<number, unknown>();
      for (const [i, d] of job.done.entries()) if (d) finished.set(i, job.results[i]);
      const toKill = this.abortWith(
        job.jobId,
        new FetchFailedJobError(error.message, error.fetchFailed, finished),
      );
      return { executorId: t.executorId, toKill };
    }
    job.failures[t.partition] = (job.failures[t.partition] as number) + 1;
    (job.failedOn[t.partition] as Set<string>).add(t.executorId);
    if ((job.failures[t.partition] as number) >= this.maxFailures) {
      return { executorId: t.executorId, toKill: this.abortAfterFailures(job, t, error) };
    }
    requeue(job, t.partition);
    return { executorId: t.executorId, toKill: [] };
  }

  /**
   * Tasks lost with an executor that they killed (it ran out of memory): each attempt counts as a
   * failure of its partition, as if it had failed by itself, and its job aborts after
   * wick.task.maxFailures. The count comes after the fact: executorLost put them back to pending
   * (they may be running again by now). Returns the tasks of the jobs aborted that still run.
   */
  lostTasksFailed(
    tasks: readonly LostTask[],
    error: (t: LostTask) => TaskError,
  ): { taskId: number; executorId: string }[] {
    const toKill: { taskId: number; executorId: string }[] = [];
    for (const t of tasks) {
      const job = this.jobs.get(t.jobId);
      if (!job || job.done[t.partition]) continue;
      job.failures[t.partition] = (job.failures[t.partition] as number) + 1;
      (job.failedOn[t.partition] as Set<string>).add(t.executorId);
      if ((job.failures[t.partition] as number) >= this.maxFailures)
        toKill.push(...this.abortAfterFailures(job, t, error(t)));
    }
    return toKill;
  }

  private abortAfterFailures(
    job: JobState,
    t: TaskRecord,
    error: TaskError,
  ): { taskId: number; executorId: string }[] {
    return this.abort(
      job.jobId,
      `Job aborted due to stage failure: Task ${t.partition} in stage ${job.jobId}.0 failed ${job.failures[t.partition]} times, most recent failure: Lost task ${t.partition}.${t.attempt} in stage ${job.jobId}.0 (TID ${t.taskId}, executor ${t.executorId}): ${error.stack ?? `${error.name}: ${error.message}`}`,
      // As the task saw them (its TaskDescription, runTask's wickTaskContext).
      { stageId: job.jobId, partitionId: job.spec.partitions?.[t.partition] ?? t.partition },
    );
  }

  /**
   * The driver took a queued task back from its executor before it started: its partition waits
   * to be placed again, first, and the attempt does not count as a failure.
   */
  taskTakenBack(taskId: number): { executorId: string } | undefined {
    const t = this.running.get(taskId);
    if (!t) return undefined;
    this.running.delete(taskId);
    const job = this.jobs.get(t.jobId);
    if (job && !job.done[t.partition]) requeue(job, t.partition);
    return { executorId: t.executorId };
  }

  /**
   * An executor is gone: its running tasks go back to pending (not counted as failures: see
   * lostTasksFailed); returns them.
   */
  executorLost(executorId: string): LostTask[] {
    const lost: LostTask[] = [];
    for (const [taskId, t] of this.running) {
      if (t.executorId !== executorId) continue;
      this.running.delete(taskId);
      const job = this.jobs.get(t.jobId);
      if (job && !job.done[t.partition]) {
        requeue(job, t.partition);
        lost.push(t);
      }
    }
    return lost;
  }

  /** Fails a job with a message; its running tasks are returned so they can be killed. */
  abort(
    jobId: number,
    message: string,
    failedTask?: FailedTask,
  ): { taskId: number; executorId: string }[] {
    return this.abortWith(jobId, new JobFailedError(message, failedTask));
  }

  private abortWith(jobId: number, error: Error): { taskId: number; executorId: string }[] {
    const job = this.jobs.get(jobId);
    if (!job) return [];
    this.jobs.delete(jobId);
    const toKill: { taskId: number; executorId: string }[] = [];
    for (const [taskId, t] of this.running) {
      if (t.jobId === jobId) {
        this.running.delete(taskId);
        toKill.push({ taskId, executorId: t.executorId });
      }
    }
    job.reject(error);
    return toKill;
  }

  abortAll(message: string): void {
    for (const jobId of [...this.jobs.keys()]) this.abort(jobId, message);
  }

  jobOf(taskId: number): number | undefined {
    return this.running.get(taskId)?.jobId;
  }

  /** The stage attempt and partition of a running task, as its DAGScheduler named them. */
  stageOfTask(
    taskId: number,
  ): { stageId: number; stageAttemptId: number; index: number } | undefined {
    const t = this.running.get(taskId);
    const job = t && this.jobs.get(t.jobId);
    const stage = job?.spec.stage;
    if (!t || !job || !stage) return undefined;
    return {
      stageId: stage.stageId,
      stageAttemptId: stage.stageAttemptId,
      index: job.spec.partitions?.[t.partition] ?? t.partition,
    };
  }

  private describe(job: JobState, partition: number): TaskDescription {
    return {
      taskId: this.nextTaskId++,
      jobId: job.jobId,
      stageId: job.jobId,
      partition: job.spec.partitions?.[partition] ?? partition,
      attempt: job.failures[partition] as number,
      source: job.spec.sources[partition] as PartitionSource,
      transformations: job.spec.partitionTransformations?.[partition] ?? job.spec.transformations,
      action: job.spec.action,
    };
  }
}

/** A task by its stage and partition (protocol/common.ts's FailedTask, as a plain public type). */
export interface FailedTaskOf {
  stageId: number;
  partitionId: number;
}

export class JobFailedError extends Error {
  constructor(
    message: string,
    /** The task whose failures aborted the job, when one did (the application's failure names it). */
    readonly failedTask?: FailedTaskOf,
  ) {
    super(message);
    this.name = 'JobFailedError';
  }
}

/** A task set ended because a task could not fetch a map output (Spark's FetchFailed). */
export class FetchFailedJobError extends Error {
  constructor(
    message: string,
    readonly fetchFailed: NonNullable<TaskError['fetchFailed']>,
    /** The results of the task set's partitions that had finished, by their place in it. */
    readonly finished: ReadonlyMap<number, unknown> = new Map(),
  ) {
    super(message);
    this.name = 'FetchFailed';
  }
}

/** Puts a partition back at the head of its job's pending ones (it runs next). */
function requeue(job: JobState, partition: number): void {
  if (job.pendingHead > 0) job.pending[--job.pendingHead] = partition;
  else job.pending.unshift(partition);
}
