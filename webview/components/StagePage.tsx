/** @jsxRuntime automatic */
/** @jsxImportSource preact */
import type { ComponentChildren } from 'preact';
import { formatBytes, formatDate, formatDuration } from '../format.js';
import { href, logHref } from '../router.js';
import { type StageData, sparkTime, type TaskData, type TaskSummary } from '../status/sparkJson.js';
import { useApi } from '../status/useApi.js';
import { BackToApp, Facts, Section, StateBadge, SubPagePending, Table } from './common.js';
import { useDashboard } from './context.js';
import { at, DurationChart } from './DurationChart.js';
import { ProgressBar } from './ProgressBar.js';

/** Every percentile, for the chart; the summary table reads five of them. */
const QUANTILES = Array.from({ length: 101 }, (_, i) => i / 100);
const QUANTILE_QUERY = QUANTILES.map((q) => String(Number(q.toFixed(2)))).join(',');
export const SLOWEST_SHOWN = 10;
export const FAILED_SHOWN = 100;

/**
 * One stage attempt (Spark's stage page): its facts, how long its tasks took (a chart and
 * Spark's summary quantiles), its slowest tasks, and its failed ones with their executor, error
 * and a link to that executor's log.
 */
export function StagePage({
  appId,
  stageId,
  attemptId,
  version,
}: {
  appId: string;
  stageId: number;
  attemptId: number;
  version: unknown;
}) {
  const { now } = useDashboard();
  const base = `/applications/${encodeURIComponent(appId)}/stages/${stageId}/${attemptId}`;
  const stage = useApi<StageData>(`${base}?details=false`, version);
  const summary = useApi<TaskSummary>(`${base}/taskSummary?quantiles=${QUANTILE_QUERY}`, version);
  const slowest = useApi<TaskData[]>(
    `${base}/taskList?sortBy=-runtime&length=${SLOWEST_SHOWN}`,
    version,
  );
  const failed = useApi<TaskData[]>(
    `${base}/taskList?status=failed&length=${FAILED_SHOWN}`,
    version,
  );
  const s = stage.data;
  if (!s) return <SubPagePending appId={appId} error={stage.error} />;
  const start = sparkTime(s.submissionTime) ?? now;
  const end = sparkTime(s.completionTime) ?? now;
  const facts: [string, ComponentChildren][] = [
    ['Status', <StateBadge key="s" state={s.status} />],
    ['Description', s.name],
    [
      'Jobs',
      <span key="j">
        {s.jobIds.map((id, i) => (
          <>
            {i > 0 && ', '}
            <a href={href({ name: 'job', appId, jobId: id })}>{`Job ${id}`}</a>
          </>
        ))}
      </span>,
    ],
    ['Submitted', formatDate(start)],
    ['Duration', formatDuration(end - start)],
    ['Total task time', formatDuration(s.executorRunTime)],
    [
      'Tasks',
      <ProgressBar
        key="t"
        completed={s.numCompleteTasks}
        active={s.numActiveTasks}
        failed={s.numFailedTasks}
        total={s.numTasks}
      />,
    ],
    ['Shuffle read', `${formatBytes(s.shuffleReadBytes)} / ${s.shuffleReadRecords} records`],
    ['Shuffle write', `${formatBytes(s.shuffleWriteBytes)} / ${s.shuffleWriteRecords} records`],
  ];
  if (s.failureReason)
    facts.push([
      'Failure reason',
      <pre key="f" class="failure">
        {s.failureReason}
      </pre>,
    ]);
  const sum = summary.data;
  return (
    <>
      <BackToApp appId={appId} />
      <Facts label="Stage" facts={facts} />
      <Section id="durations" title="Task Durations">
        {sum ? (
          <>
            <DurationChart quantiles={sum.quantiles} durations={sum.duration} />
            <Table
              caption="Summary of task durations"
              headers={['Min', '25th percentile', 'Median', '75th percentile', 'Max']}
              empty=""
              rows={[
                <tr key="d" data-summary="duration">
                  {[0, 0.25, 0.5, 0.75, 1].map((q) => (
                    <td key={q} class="num">
                      {formatDuration(at(sum.quantiles, sum.duration, q))}
                    </td>
                  ))}
                </tr>,
              ]}
            />
          </>
        ) : (
          <p class="empty">{summary.error ?? 'No task has finished yet.'}</p>
        )}
      </Section>
      <Section id="slowest" title="Slowest Tasks">
        <TasksTable
          brief
          appId={appId}
          tasks={slowest.data ?? []}
          caption="Slowest tasks"
          empty="No task has finished yet."
        />
      </Section>
      <Section id="failed" title="Failed Tasks" count={s.numFailedTasks}>
        <TasksTable
          appId={appId}
          tasks={failed.data ?? []}
          caption="Failed tasks"
          empty="No task has failed."
        />
        {failed.data && s.numFailedTasks > failed.data.length && (
          <p class="muted">{`${failed.data.length} of ${s.numFailedTasks} failed tasks listed: this page shows up to ${FAILED_SHOWN}, and a driver reports tasks past 1000 a second as counts only.`}</p>
        )}
      </Section>
    </>
  );
}

function TasksTable({
  appId,
  tasks,
  caption,
  empty,
  brief = false,
}: {
  appId: string;
  /** Errors by their first line only (the failed tasks' table has them whole). */
  brief?: boolean;
  tasks: TaskData[];
  caption: string;
  empty: string;
}) {
  // A history server has no executor's log to show (HistoryDataSource.NO_EXECUTOR_LOGS).
  const { config } = useDashboard();
  return (
    <Table
      caption={caption}
      headers={[
        'Task ID',
        'Index',
        'Attempt',
        'Status',
        'Executor',
        'Host',
        'Launched',
        'Duration',
        'Shuffle Read',
        'Shuffle Write',
        'Error',
        'Log',
      ]}
      empty={empty}
      rows={tasks.map((t) => {
        const read = t.taskMetrics?.shuffleReadMetrics;
        const logs = config.mode !== 'history' && /^\d+$/.test(t.executorId);
        return (
          <tr key={t.taskId} data-task={t.taskId}>
            <td class="num">{t.taskId}</td>
            <td class="num">{t.index}</td>
            <td class="num">{t.attempt}</td>
            <td>
              <StateBadge state={t.status} />
            </td>
            <td class="num">{t.executorId}</td>
            <td>{t.host}</td>
            <td>{formatDate(sparkTime(t.launchTime) ?? 0)}</td>
            <td class="num">{t.duration !== undefined ? formatDuration(t.duration) : ''}</td>
            <td class="num">
              {read ? formatBytes(read.remoteBytesRead + read.localBytesRead) : ''}
            </td>
            <td class="num">
              {t.taskMetrics ? formatBytes(t.taskMetrics.shuffleWriteMetrics.bytesWritten) : ''}
            </td>
            <td class="reason">
              {t.errorMessage ? (
                <pre class="failure">
                  {brief ? (t.errorMessage.split('\n', 1)[0] ?? '') : t.errorMessage}
                </pre>
              ) : (
                ''
              )}
            </td>
            <td>
              {logs && (
                <a
                  href={logHref({ appId, executorId: Number(t.executorId), logType: 'stderr' })}
                  aria-label={`stderr of executor ${t.executorId}`}
                >
                  stderr
                </a>
              )}
            </td>
          </tr>
        );
      })}
    />
  );
}
