import { KillTask, LaunchTask } from '../../protocol/executor.js';
import type { TaskDescription } from '../../protocol/task.js';
import type { ExecutorData } from './ExecutorData.js';
import { firstWriteSize } from './prefetch.js';
import type { TaskScheduler } from './scheduler/TaskScheduler.js';

/**
 * What the DriverEndpoint sends executors for the scheduler: the tasks it placed (each checked
 * against the largest frame, Spark's launchTasks), written out per executor so that a queue's
 * refill does not keep its first tasks waiting, and the kills of an aborted job's tasks.
 */
export class TaskLauncher {
  /** The serialized size of what a job's tasks share, by the job's action (see serializedSize). */
  private readonly sharedSizes = new WeakMap<
    object,
    { transformations: TaskDescription['transformations']; bytes: number }
  >();

  constructor(
    private readonly scheduler: TaskScheduler,
    private readonly executors: ReadonlyMap<string, ExecutorData>,
    /** wick.rpc.message.maxSize: a task of this many bytes or more aborts its job. */
    private readonly maxMessageSize: number,
    /** How many files the application has added (each task says so, to wait for them). */
    private readonly filesAdded: () => number,
  ) {}

  /**
   * Sends the tasks placed: on free cores, or (`queued`, with their job's task duration `ms`) to
   * queue slots. What one turn sends goes out in one write per executor at the end of the turn,
   * but a queue's refill is up to PREFETCH_PER_CORE tasks per core, a few milliseconds to
   * serialize, during which an executor that is short of work would wait for all of them. So
   * tasks for free cores go out at once, and a refill's first part too (firstWriteSize).
   */
  launch(placed: { executorId: string; task: TaskDescription }[], queued: boolean, ms = 0): void {
    const sent = new Map<ExecutorData, number>();
    for (const { executorId, task } of placed) {
      // An earlier task of this batch may have aborted the job (it was too large).
      if (this.scheduler.jobOf(task.taskId) === undefined) continue;
      const e = this.executors.get(executorId) as ExecutorData;
      if (this.tooLarge(task)) continue;
      e.launched(task.taskId, queued);
      const files = this.filesAdded();
      const resources = e.taskResources?.of(task.taskId);
      e.ref.send(
        LaunchTask({
          task:
            files > 0 || resources
              ? { ...task, ...(files > 0 ? { files } : {}), ...(resources ? { resources } : {}) }
              : task,
        }),
      );
      const n = (sent.get(e) ?? 0) + 1;
      sent.set(e, n);
      if (queued && n === firstWriteSize(e.cores, ms)) e.ref.flush();
    }
    if (!queued) for (const e of sent.keys()) e.ref.flush();
  }

  /**
   * Asks executors to stop tasks of an aborted job (Spark cancels them too). Each frees what it
   * held when it reports its end; tasks placed but never launched need nothing.
   */
  killTasks(tasks: { taskId: number; executorId: string }[]): void {
    for (const { taskId, executorId } of tasks) {
      const e = this.executors.get(executorId);
      if (e?.holds(taskId)) e.ref.send(KillTask({ taskId, reason: 'its job was aborted' }));
    }
  }

  /**
   * Buffer.byteLength(JSON.stringify(task)), without serializing what every task of a job shares:
   * its transformations and action (the functions' sources and values) are measured once per job.
   */
  private serializedSize(task: TaskDescription): number {
    let shared = this.sharedSizes.get(task.action);
    if (shared?.transformations !== task.transformations) {
      shared = {
        transformations: task.transformations,
        bytes: Buffer.byteLength(
          `,"transformations":${JSON.stringify(task.transformations)},"action":${JSON.stringify(task.action)}`,
        ),
      };
      this.sharedSizes.set(task.action, shared);
    }
    // The task's own fields, in the order describe() gives them; their closing brace stands for
    // the whole object's.
    const own = JSON.stringify({
      taskId: task.taskId,
      jobId: task.jobId,
      stageId: task.stageId,
      partition: task.partition,
      attempt: task.attempt,
      source: task.source,
    });
    return Buffer.byteLength(own) + shared.bytes;
  }

  /** Spark's check in launchTasks: a task larger than a frame aborts its job with advice. */
  private tooLarge(task: TaskDescription): boolean {
    const size = this.serializedSize(task);
    if (size < this.maxMessageSize) return false;
    const kill = this.scheduler.abort(
      task.jobId,
      `Serialized task ${task.taskId}:${task.partition} was ${size} bytes, which exceeds max allowed: wick.rpc.message.maxSize (${this.maxMessageSize} bytes). Consider increasing wick.rpc.message.maxSize or using broadcast variables for large values.`,
    );
    this.killTasks(kill);
    return true;
  }
}
