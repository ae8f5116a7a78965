/** @jsxRuntime automatic */
/** @jsxImportSource preact */
import type { ExecutorData, JobData, StageData } from '../status/sparkJson.js';
import { useApi } from '../status/useApi.js';
import { Section } from './common.js';
import { JobsTable } from './JobsTable.js';
import { SparkExecutorsTable } from './SparkExecutorsTable.js';
import { Timeline } from './Timeline.js';

/**
 * An application's jobs, what its executors ran and its event timeline, from the master's
 * /api/v1 (live from its driver's reports; after it ended, from the store the master kept or
 * its event log). `version` changes when the master pushes new progress: then they are read again.
 */
export function AppStatusSections({ appId, version }: { appId: string; version: unknown }) {
  const base = `/applications/${encodeURIComponent(appId)}`;
  const jobs = useApi<JobData[]>(`${base}/jobs`, version);
  const stages = useApi<StageData[]>(`${base}/stages`, version);
  const executors = useApi<ExecutorData[]>(`${base}/allexecutors`, version);
  const error = jobs.error ?? stages.error ?? executors.error;
  if (!jobs.data && error)
    return (
      <p class="empty" role="status">
        {`No jobs to show: ${error}`}
      </p>
    );
  return (
    <>
      <Section id="jobs" title="Jobs" count={jobs.data?.length}>
        {jobs.data ? (
          <JobsTable appId={appId} jobs={jobs.data} />
        ) : (
          <vscode-progress-ring aria-label="Loading jobs" />
        )}
      </Section>
      <Section id="timeline" title="Event Timeline">
        {jobs.data && stages.data && executors.data ? (
          <Timeline
            appId={appId}
            jobs={jobs.data}
            stages={stages.data}
            executors={executors.data}
          />
        ) : (
          <vscode-progress-ring aria-label="Loading the timeline" />
        )}
      </Section>
      <Section id="executor-tasks" title="Tasks by Executor" count={executors.data?.length}>
        {executors.data ? (
          <SparkExecutorsTable appId={appId} executors={executors.data} />
        ) : (
          <vscode-progress-ring aria-label="Loading executors" />
        )}
      </Section>
    </>
  );
}
