/** @jsxRuntime automatic */
/** @jsxImportSource preact */
import { formatBytes, formatDate, formatDuration } from '../format.js';
import { href } from '../router.js';
import { type StageData, sparkTime } from '../status/sparkJson.js';
import { StateBadge, Table } from './common.js';
import { useDashboard } from './context.js';
import { ProgressBar } from './ProgressBar.js';

/** Stage attempts as Spark's stages table lists them: tasks, shuffle read and write, and why one failed. */
export function StagesTable({ appId, stages }: { appId: string; stages: StageData[] }) {
  const { now } = useDashboard();
  return (
    <Table
      caption="Stages"
      headers={[
        'Stage ID',
        'Attempt',
        'Description',
        'Status',
        'Submitted',
        'Duration',
        'Tasks',
        'Shuffle Read',
        'Shuffle Write',
        'Failure Reason',
      ]}
      empty="No stage has been submitted."
      rows={stages.map((s) => {
        const start = sparkTime(s.submissionTime) ?? now;
        const end = sparkTime(s.completionTime) ?? now;
        return (
          <tr key={`${s.stageId}-${s.attemptId}`} data-stage={`${s.stageId}.${s.attemptId}`}>
            <td class="num">
              <a
                href={href({
                  name: 'stage',
                  appId,
                  stageId: s.stageId,
                  attemptId: s.attemptId,
                })}
              >
                {s.stageId}
              </a>
            </td>
            <td class="num">{s.attemptId}</td>
            <td>{s.name}</td>
            <td>
              <StateBadge state={s.status} />
            </td>
            <td>{formatDate(start)}</td>
            <td class="num">{formatDuration(end - start)}</td>
            <td class="progress-cell">
              <ProgressBar
                completed={s.numCompleteTasks}
                active={s.numActiveTasks}
                failed={s.numFailedTasks}
                total={s.numTasks}
              />
            </td>
            <td class="num">{s.shuffleReadBytes > 0 ? formatBytes(s.shuffleReadBytes) : ''}</td>
            <td class="num">{s.shuffleWriteBytes > 0 ? formatBytes(s.shuffleWriteBytes) : ''}</td>
            <td class="reason">{s.failureReason ?? ''}</td>
          </tr>
        );
      })}
    />
  );
}
