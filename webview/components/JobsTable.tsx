/** @jsxRuntime automatic */
/** @jsxImportSource preact */
import { formatDate, formatDuration } from '../format.js';
import { href } from '../router.js';
import { type JobData, sparkTime } from '../status/sparkJson.js';
import { StateBadge, Table } from './common.js';
import { useDashboard } from './context.js';
import { ProgressBar } from './ProgressBar.js';

/** An application's jobs, the most recent first (Spark's jobs page, in one table). */
export function JobsTable({ appId, jobs }: { appId: string; jobs: JobData[] }) {
  const { now } = useDashboard();
  return (
    <Table
      caption="Jobs"
      headers={['Job ID', 'Status', 'Submitted', 'Duration', 'Stages: done/total', 'Tasks']}
      empty="No job has run yet."
      rows={jobs.map((j) => {
        const start = sparkTime(j.submissionTime) ?? now;
        const end = sparkTime(j.completionTime) ?? now;
        return (
          <tr key={j.jobId} data-job={j.jobId}>
            <td class="num">
              <a href={href({ name: 'job', appId, jobId: j.jobId })}>{j.jobId}</a>
            </td>
            <td>
              <StateBadge state={j.status} />
            </td>
            <td>{formatDate(start)}</td>
            <td class="num">{formatDuration(end - start)}</td>
            <td class="num">
              {`${j.numCompletedStages}/${j.stageIds.length - j.numSkippedStages}`}
              {j.numSkippedStages > 0 ? ` (${j.numSkippedStages} skipped)` : ''}
              {j.numFailedStages > 0 ? ` (${j.numFailedStages} failed)` : ''}
            </td>
            <td class="progress-cell">
              <ProgressBar
                completed={j.numCompletedTasks}
                active={j.numActiveTasks}
                failed={j.numFailedTasks}
                total={j.numTasks}
              />
            </td>
          </tr>
        );
      })}
    />
  );
}
