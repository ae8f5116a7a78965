/**
 * A running application's jobs and stages, from the progress its driver reports through the
 * master (AppSummary.progress: the running ones, with their task counts). Finished jobs are
 * counted in the application's tooltip; their whole story is on the dashboard.
 */
import type { AppSummary } from '../../../backend/protocol/state.js';
import { duration, type Item } from './item.js';
import type { ActiveStage, Model, Node } from './node.js';

type J = Extract<Node, { kind: 'job' }>;
type S = Extract<Node, { kind: 'stage' }>;
type Counts = J['job']['counts'];

/** "120/400 tasks · 4 running · 2 failed" */
export function tasksText(c: Counts): string {
  return [
    `${c.numCompletedTasks}/${c.numTasks} tasks`,
    ...(c.numActiveTasks ? [`${c.numActiveTasks} running`] : []),
    ...(c.numFailedTasks ? [`${c.numFailedTasks} failed`] : []),
    ...(c.numKilledTasks ? [`${c.numKilledTasks} killed`] : []),
  ].join(' · ');
}

/** The share of tasks done, as a whole percent (0 without tasks). */
export function percentDone(c: Counts): number {
  return c.numTasks > 0 ? Math.floor((100 * c.numCompletedTasks) / c.numTasks) : 0;
}

/** The app's running jobs, each with its running stages; stages of no listed job come after. */
export function progressNodes(a: AppSummary): Node[] {
  const p = a.progress;
  if (!p || (a.state !== 'RUNNING' && a.state !== 'WAITING')) return [];
  const placed = new Set<ActiveStage>();
  const jobs: Node[] = p.activeJobs.map((job) => {
    const stages = p.activeStages.filter((s) => job.stageIds.includes(s.stageId));
    for (const s of stages) placed.add(s);
    return { kind: 'job', appId: a.id, job, stages };
  });
  const loose: Node[] = p.activeStages
    .filter((s) => !placed.has(s))
    .map((stage) => ({ kind: 'stage', appId: a.id, stage }));
  return [...jobs, ...loose];
}

export function jobItem(n: J, m: Model): Item {
  const c = n.job.counts;
  const stages = n.stages.map((s) => s.stageId).join(', ');
  return {
    id: `job:${n.appId}:${n.job.jobId}`,
    label: `Job ${n.job.jobId}`,
    description: `${percentDone(c)}% · ${tasksText(c)} · ${duration(m.now - n.job.submissionTime)}`,
    tooltip: `Job ${n.job.jobId} of ${n.appId}: running for ${duration(m.now - n.job.submissionTime)}\nStages: ${n.job.stageIds.join(', ')}${stages ? ` (running: ${stages})` : ''}\n${tasksText(c)}`,
    icon: { id: 'sync~spin', color: 'charts.blue' },
    contextValue: 'wick.job.running',
    collapsible: n.stages.length > 0 ? 'expanded' : 'none',
  };
}

export function jobChildren(n: J): Node[] {
  return n.stages.map((stage) => ({ kind: 'stage', appId: n.appId, stage }));
}

export function stageItem(n: S, m: Model): Item {
  const s = n.stage;
  const c = s.counts;
  const attempt = s.attemptId > 0 ? ` (attempt ${s.attemptId})` : '';
  return {
    id: `stage:${n.appId}:${s.stageId}:${s.attemptId}`,
    label: `Stage ${s.stageId}${attempt}: ${s.name}`,
    description: `${percentDone(c)}% · ${tasksText(c)}`,
    tooltip: `Stage ${s.stageId}${attempt} of ${n.appId}: ${s.name}\nRunning for ${duration(m.now - s.submissionTime)}\n${tasksText(c)}`,
    icon: {
      id: c.numFailedTasks > 0 ? 'warning' : 'loading~spin',
      ...(c.numFailedTasks > 0 ? { color: 'charts.orange' } : {}),
    },
    contextValue: 'wick.stage.active',
    collapsible: 'none',
  };
}
