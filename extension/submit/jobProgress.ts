/**
 * What a submit's progress notification says once the app is registered, until it ends: its
 * executors, then its running job and stages with their task counts (the driver's reports, as
 * the master pushes them: AppSummary.progress), in the words of Spark's console progress bar
 * ("Stage 3: 120 + 4 / 400"). Pure, so its words are unit-tested.
 */
import type { AppSummary } from '../../backend/protocol/state.js';

export const WAITING_FOR_EXECUTORS = 'Waiting for executors…';

/** Whether the app has ended (the notification closes; the run's report takes over). */
export function appEnded(a: AppSummary | undefined): boolean {
  return a === undefined || (a.state !== 'WAITING' && a.state !== 'RUNNING');
}

export function jobProgressMessage(a: AppSummary): string {
  const p = a.progress;
  const running = a.executors.some((e) => e.state === 'RUNNING');
  if (!p || (p.activeJobs.length === 0 && p.jobs.succeeded + p.jobs.failed === 0))
    return running ? 'Running, no job yet…' : WAITING_FOR_EXECUTORS;
  const done = p.jobs.succeeded + p.jobs.failed;
  const doneText = done
    ? `${p.jobs.succeeded} job${p.jobs.succeeded === 1 ? '' : 's'} done${p.jobs.failed ? `, ${p.jobs.failed} failed` : ''}`
    : '';
  const job = p.activeJobs[0];
  if (!job) return `${doneText} · between jobs`;
  const stages = p.activeStages.filter((s) => job.stageIds.includes(s.stageId));
  const parts = stages.map((s) => {
    const c = s.counts;
    const failed = c.numFailedTasks ? `, ${c.numFailedTasks} failed` : '';
    return `Stage ${s.stageId}: ${c.numCompletedTasks} + ${c.numActiveTasks} / ${c.numTasks} tasks${failed}`;
  });
  const more = p.activeJobs.length > 1 ? ` (+${p.activeJobs.length - 1} more jobs)` : '';
  return [
    `Job ${job.jobId}${more}`,
    ...(parts.length ? parts : [`${job.counts.numCompletedTasks} / ${job.counts.numTasks} tasks`]),
    ...(doneText ? [doneText] : []),
  ].join(' · ');
}
