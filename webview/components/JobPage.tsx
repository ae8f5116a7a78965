/** @jsxRuntime automatic */
/** @jsxImportSource preact */
import type { ComponentChildren } from 'preact';
import { formatDate, formatDuration } from '../format.js';
import { type JobData, type StageData, sparkTime } from '../status/sparkJson.js';
import { useApi } from '../status/useApi.js';
import { BackToApp, Facts, Section, StateBadge, SubPagePending } from './common.js';
import { useDashboard } from './context.js';
import { ProgressBar } from './ProgressBar.js';
import { StageDag } from './StageDag.js';
import { StagesTable } from './StagesTable.js';

/** One job (Spark's job page): its facts, the DAG of its stages, and its stage attempts. */
export function JobPage({
  appId,
  jobId,
  version,
}: {
  appId: string;
  jobId: number;
  version: unknown;
}) {
  const { now } = useDashboard();
  const base = `/applications/${encodeURIComponent(appId)}`;
  const job = useApi<JobData>(`${base}/jobs/${jobId}`, version);
  const all = useApi<StageData[]>(`${base}/stages`, version);
  const j = job.data;
  if (!j) return <SubPagePending appId={appId} error={job.error} />;
  // This job's attempts; a stage it skipped ran in an earlier job, which says its parents.
  const stages = (all.data ?? [])
    .filter((s) => s.jobIds.includes(jobId))
    .sort((a, b) => b.stageId - a.stageId || b.attemptId - a.attemptId);
  const known = (all.data ?? []).filter((s) => j.stageIds.includes(s.stageId));
  const start = sparkTime(j.submissionTime) ?? now;
  const end = sparkTime(j.completionTime) ?? now;
  const facts: [string, ComponentChildren][] = [
    ['Status', <StateBadge key="s" state={j.status} />],
    ['Submitted', formatDate(start)],
    ['Duration', formatDuration(end - start)],
    [
      'Stages',
      `${j.numCompletedStages} done, ${j.numActiveStages} running, ${j.numFailedStages} failed, ${j.numSkippedStages} skipped of ${j.stageIds.length}`,
    ],
    [
      'Tasks',
      <ProgressBar
        key="t"
        completed={j.numCompletedTasks}
        active={j.numActiveTasks}
        failed={j.numFailedTasks}
        total={j.numTasks}
        skipped={j.numSkippedTasks}
      />,
    ],
  ];
  return (
    <>
      <BackToApp appId={appId} />
      <Facts label="Job" facts={facts} />
      <Section id="dag" title="DAG of Stages">
        {all.data ? (
          <StageDag
            appId={appId}
            stageIds={j.stageIds}
            stages={stages}
            known={known}
            running={j.status === 'RUNNING'}
          />
        ) : (
          <vscode-progress-ring aria-label="Loading stages" />
        )}
      </Section>
      <Section id="job-stages" title="Stages" count={stages.length}>
        <StagesTable appId={appId} stages={stages} />
      </Section>
    </>
  );
}
