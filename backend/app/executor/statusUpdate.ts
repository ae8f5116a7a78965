import { StatusUpdate } from '../../protocol/executor.js';
import type { MessageOf } from '../../protocol/registry.js';
import { boundedTaskError } from '../../protocol/task.js';
import type { TaskReport } from './StatusReporter.js';

/**
 * A task's StatusUpdate as this executor sends every one (a task's own report, a fetch that
 * failed, a file that could not be fetched): its error cut to the bounds of TaskError, since a
 * task may throw a message of any size.
 */
export function statusUpdate(executorId: string, r: TaskReport): MessageOf<typeof StatusUpdate> {
  return StatusUpdate({
    executorId,
    ...r,
    ...(r.error ? { error: boundedTaskError(r.error) } : {}),
  });
}
