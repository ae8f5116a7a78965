import type { ApplicationState } from '../../protocol/appStates.js';
import type { AppSummary } from '../../protocol/state.js';
import { counter, gauge, type MetricDef, type Sample } from './define.js';

/**
 * Per-application metrics, as the master serves them: one series per application the master
 * retains (its active ones and its last wick.deploy.retainedApplications completed ones), labelled
 * as Spark 3 labels its executor metrics (PrometheusResource): `application_id`,
 * `application_name`. So the number of series is bounded by what the master keeps, and an
 * application's series go when the master forgets it.
 *
 * The values come from an AppMetricsSource. What the master knows of every application (state,
 * cores, executors) and the jobs and stages of the summary its driver reports (AppSummary's
 * `progress`) are `appMetricsFromMasterState`; tasks and shuffle bytes, which that summary does
 * not carry, are optional groups a richer source may fill. A group a source does not fill is not written at all,
 * rather than written as 0: "unknown" must not read as "none".
 */

/** Jobs, stages or tasks of one application: running now, and totals since it started. */
export interface WorkCounts {
  active: number;
  /** Ended well (Spark: succeededJobs, completedStages, completedTasks). */
  completed: number;
  failed: number;
}

export interface AppMetrics {
  appId: string;
  name: string;
  state: ApplicationState;
  coresGranted: number;
  /** Executors granted and not ended (LAUNCHING or RUNNING). */
  executors: number;
  /** Since it registered, until it ended. */
  runtimeMs: number;
  jobs?: WorkCounts;
  stages?: WorkCounts;
  tasks?: WorkCounts;
  /** Totals over its tasks, in bytes. */
  shuffle?: { readBytes: number; writeBytes: number };
}

/** Where the per-application metrics come from, read at each scrape. */
export interface AppMetricsSource {
  apps(): Iterable<AppMetrics>;
}

/** Applications as the master's state shows them: no jobs, stages, tasks or shuffle. */
export function appMetricsFromMasterState(
  state: () => { activeApps: AppSummary[]; completedApps: AppSummary[] } | undefined,
  now: () => number = Date.now,
): AppMetricsSource {
  return {
    *apps() {
      const s = state();
      if (!s) return;
      const t = now();
      for (const list of [s.activeApps, s.completedApps]) {
        for (const app of list) yield fromSummary(app, t);
      }
    },
  };
}

function fromSummary(app: AppSummary, now: number): AppMetrics {
  let executors = 0;
  for (const e of app.executors) if (e.state === 'LAUNCHING' || e.state === 'RUNNING') executors++;
  const p = app.progress;
  return {
    appId: app.id,
    name: app.name,
    state: app.state,
    coresGranted: app.coresGranted,
    executors,
    runtimeMs: Math.max(0, (app.endTime ?? now) - app.startTime),
    // The driver's reported summary (the master's store of it: jobs and stage attempts kept, by
    // status). Tasks and shuffle bytes are not in the pushed summary: not written.
    ...(p
      ? {
          jobs: { active: p.jobs.active, completed: p.jobs.succeeded, failed: p.jobs.failed },
          stages: {
            active: p.stages.active,
            completed: p.stages.complete,
            failed: p.stages.failed,
          },
        }
      : {}),
  };
}

const LABELS = ['application_id', 'application_name'] as const;

function labelled(app: AppMetrics): Record<string, string> {
  return { application_id: app.appId, application_name: app.name };
}

/** One sample per application that has `value`. */
function each(apps: readonly AppMetrics[], value: (a: AppMetrics) => number | undefined): Sample[] {
  const out: Sample[] = [];
  for (const app of apps) {
    const v = value(app);
    if (v !== undefined) out.push({ labels: labelled(app), value: v });
  }
  return out;
}

type Apps = { apps: readonly AppMetrics[] };
const labels = LABELS;

export const applicationMetricDefs: MetricDef<Apps>[] = [
  ...gauge<Apps>(
    'application',
    'status',
    {
      help: "1, labelled with the application's state (Spark's string gauge status, as a label)",
      labels: [...labels, 'state'],
      spark: 'application.<name>.<startTime>.status',
    },
    ({ apps }) => apps.map((a) => ({ labels: { ...labelled(a), state: a.state }, value: 1 })),
  ),
  ...gauge<Apps>(
    'application',
    'cores',
    {
      help: 'Cores granted to the application now',
      labels,
      spark: 'application.<name>.<startTime>.cores',
    },
    ({ apps }) => each(apps, (a) => a.coresGranted),
  ),
  ...gauge<Apps>(
    'application',
    'runtime_ms',
    {
      help: 'Milliseconds since the application registered (until it ended)',
      labels,
      spark: 'application.<name>.<startTime>.runtime_ms',
    },
    ({ apps }) => each(apps, (a) => a.runtimeMs),
  ),
  ...gauge<Apps>(
    'application',
    'executors',
    { help: 'Executors of the application launching or running', labels },
    ({ apps }) => each(apps, (a) => a.executors),
  ),
  ...gauge<Apps>(
    'application',
    'job_activeJobs',
    { help: 'Jobs running now', labels, spark: 'driver.DAGScheduler.job.activeJobs' },
    ({ apps }) => each(apps, (a) => a.jobs?.active),
  ),
  ...counter<Apps>(
    'application',
    'jobs_succeededJobs',
    {
      help: 'Jobs that succeeded, since the application started',
      labels,
      spark: 'driver.appStatus.jobs.succeededJobs',
    },
    ({ apps }) => each(apps, (a) => a.jobs?.completed),
  ),
  ...counter<Apps>(
    'application',
    'jobs_failedJobs',
    {
      help: 'Jobs that failed, since the application started',
      labels,
      spark: 'driver.appStatus.jobs.failedJobs',
    },
    ({ apps }) => each(apps, (a) => a.jobs?.failed),
  ),
  ...gauge<Apps>(
    'application',
    'stage_runningStages',
    { help: 'Stages running now', labels, spark: 'driver.DAGScheduler.stage.runningStages' },
    ({ apps }) => each(apps, (a) => a.stages?.active),
  ),
  ...counter<Apps>(
    'application',
    'stages_completedStages',
    {
      help: 'Stage attempts that completed, since the application started',
      labels,
      spark: 'driver.appStatus.stages.completedStages',
    },
    ({ apps }) => each(apps, (a) => a.stages?.completed),
  ),
  ...counter<Apps>(
    'application',
    'stages_failedStages',
    {
      help: 'Stage attempts that failed, since the application started',
      labels,
      spark: 'driver.appStatus.stages.failedStages',
    },
    ({ apps }) => each(apps, (a) => a.stages?.failed),
  ),
  ...gauge<Apps>(
    'application',
    'tasks_activeTasks',
    { help: 'Tasks running now', labels, spark: 'executor summary activeTasks, summed' },
    ({ apps }) => each(apps, (a) => a.tasks?.active),
  ),
  ...counter<Apps>(
    'application',
    'tasks_completedTasks',
    {
      help: 'Tasks that succeeded, since the application started',
      labels,
      spark: 'driver.appStatus.tasks.completedTasks',
    },
    ({ apps }) => each(apps, (a) => a.tasks?.completed),
  ),
  ...counter<Apps>(
    'application',
    'tasks_failedTasks',
    {
      help: 'Tasks that failed, since the application started',
      labels,
      spark: 'driver.appStatus.tasks.failedTasks',
    },
    ({ apps }) => each(apps, (a) => a.tasks?.failed),
  ),
  ...counter<Apps>(
    'application',
    'totalShuffleRead',
    {
      help: 'Shuffle bytes its tasks read, since the application started',
      labels,
      spark: 'executor summary totalShuffleRead, summed',
    },
    ({ apps }) => each(apps, (a) => a.shuffle?.readBytes),
  ),
  ...counter<Apps>(
    'application',
    'totalShuffleWrite',
    {
      help: 'Shuffle bytes its tasks wrote, since the application started',
      labels,
      spark: 'executor summary totalShuffleWrite, summed',
    },
    ({ apps }) => each(apps, (a) => a.shuffle?.writeBytes),
  ),
];
