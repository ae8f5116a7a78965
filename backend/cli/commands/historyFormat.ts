/**
 * Logged applications for a terminal: the list (`wick history`) and one application's jobs and
 * stages (`wick history <app-id>`, `wick status <app-id>` for an application the master no longer
 * knows). Durations as Spark's UI writes them (UIUtils.formatDuration); times in UTC, said so.
 */
import type { AppHistorySummary, StageRow } from '../../history/AppHistorySummary.js';
import type { LoadedApplication } from '../../history/HistoryProvider.js';
import type { ApplicationListing } from '../../history/readListing.js';

/** COMPLETED, FAILED (ended with a failure), or INCOMPLETE (no end: running, or its driver died). */
export function listingStatus(a: ApplicationListing): string {
  if (!a.completed) return a.truncated ? 'INCOMPLETE (log cut short)' : 'INCOMPLETE';
  return a.failure !== undefined ? 'FAILED' : 'COMPLETED';
}

/** Spark's UIUtils.formatDuration. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const min = s / 60;
  if (min < 60) return `${min.toFixed(1)} min`;
  return `${(min / 60).toFixed(1)} h`;
}

export function formatTime(epochMs: number): string {
  return `${new Date(epochMs).toISOString().slice(0, 19).replace('T', ' ')}Z`;
}

/** Ended: end − start; running (or cut): up to the log's last write, marked with a +. */
export function listingDuration(a: ApplicationListing): string {
  if (a.completed && a.endTime !== undefined) return formatDuration(a.endTime - a.startTime);
  return `${formatDuration(Math.max(0, a.lastUpdated - a.startTime))}+`;
}

function table(rows: string[][]): string[] {
  const widths = (rows[0] ?? []).map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) =>
    r
      .map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd(),
  );
}

/** The list: one row per application, with its jobs when they were loaded. */
export function formatHistoryList(
  dir: string,
  apps: readonly { listing: ApplicationListing; summary?: AppHistorySummary }[],
): string {
  if (apps.length === 0) return `No event logs in ${dir}.\n`;
  const rows = [['APP ID', 'NAME', 'STATUS', 'STARTED (UTC)', 'DURATION', 'JOBS OK/FAILED']];
  for (const { listing: a, summary } of apps) {
    const t = summary?.totals;
    const jobs = t
      ? `${t.jobsSucceeded}/${t.jobsFailed}${t.jobsRunning ? ` (${t.jobsRunning} running)` : ''}`
      : '?';
    rows.push([
      a.appId,
      a.name,
      listingStatus(a),
      formatTime(a.startTime).slice(0, -1),
      listingDuration(a),
      jobs,
    ]);
  }
  return `Event logs in ${dir}: ${apps.length} application(s)\n${table(rows).join('\n')}\n`;
}

/** One application: its line, its log, its failure, then its jobs and its stages. */
export function formatAppHistory(app: LoadedApplication): string {
  const { listing: a, summary: s, replay } = app;
  const lines = [
    `${a.appId}  ${a.name}  ${listingStatus(a)}  user ${a.user}  started ${formatTime(a.startTime)}  duration ${listingDuration(a)}`,
    `  event log ${a.logPath} (${a.fileSize} bytes)`,
  ];
  if (a.failure !== undefined) lines.push(`  failed: ${a.failure.split('\n')[0]}`);
  for (const p of replay.problems)
    lines.push(`  ${p.truncated ? 'cut' : 'unreadable'}: ${p.message}`);
  if (replay.skipped > 0) lines.push(`  ${replay.skipped} event(s) that are no Wick event skipped`);
  lines.push(...formatJobsAndStages(s));
  return `${lines.join('\n')}\n`;
}

export function formatJobsAndStages(s: AppHistorySummary): string[] {
  const t = s.totals;
  const lines: string[] = [];
  const dropped = (n: number, what: string) =>
    n > 0
      ? ` (the ${n} oldest ${what} not kept: wick.ui.retained${what === 'jobs' ? 'Jobs' : 'Stages'})`
      : '';
  lines.push(
    `Jobs: ${t.jobsSucceeded} succeeded, ${t.jobsFailed} failed, ${t.jobsRunning} running${dropped(t.jobsDropped, 'jobs')}`,
  );
  const stagesOf = (jobId: number) => s.stages.filter((st) => st.jobId === jobId);
  if (s.jobs.length > 0) {
    const rows = [['JOB', 'STATUS', 'STAGES', 'TASKS DONE/TOTAL', 'DURATION', 'ERROR']];
    for (const j of s.jobs) {
      const stages = stagesOf(j.jobId).filter((st) => st.status !== 'SKIPPED');
      const done = stages.reduce((n, st) => n + st.numCompleteTasks, 0);
      const total = stages.reduce((n, st) => n + st.numTasks, 0);
      const skipped = j.stageIds.length - new Set(stages.map((st) => st.stageId)).size;
      rows.push([
        String(j.jobId),
        j.status,
        `${j.stageIds.length}${skipped > 0 ? ` (${skipped} skipped)` : ''}`,
        `${done}/${total}`,
        j.completionTime !== undefined ? formatDuration(j.completionTime - j.submissionTime) : '-',
        j.error?.split('\n')[0] ?? '',
      ]);
    }
    lines.push(...table(rows).map((r) => `  ${r}`));
  }
  lines.push(
    `Stages: ${t.stagesCompleted} completed, ${t.stagesFailed} failed, ${t.stagesSkipped} skipped${dropped(t.stagesDropped, 'stages')}`,
  );
  const ran = s.stages.filter((st) => st.status !== 'SKIPPED');
  if (ran.length > 0) {
    const rows = [
      ['STAGE', 'ATTEMPT', 'JOB', 'STATUS', 'TASKS DONE/FAILED/TOTAL', 'DURATION', 'NAME'],
    ];
    for (const st of ran) rows.push(stageRow(st));
    lines.push(...table(rows).map((r) => `  ${r}`));
    for (const st of ran) {
      if (st.failureReason) {
        lines.push(
          `  stage ${st.stageId}.${st.attemptId} failed: ${st.failureReason.split('\n')[0]}`,
        );
      }
    }
  }
  return lines;
}

function stageRow(st: StageRow): string[] {
  return [
    String(st.stageId),
    String(st.attemptId),
    st.jobId === undefined ? '-' : String(st.jobId),
    st.status,
    `${st.numCompleteTasks}/${st.numFailedTasks}/${st.numTasks}`,
    st.completionTime !== undefined && st.submissionTime !== undefined
      ? formatDuration(st.completionTime - st.submissionTime)
      : '-',
    st.name,
  ];
}
