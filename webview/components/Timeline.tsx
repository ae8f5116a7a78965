/** @jsxRuntime automatic */
/** @jsxImportSource preact */
import { formatDate, formatDuration } from '../format.js';
import { href } from '../router.js';
import { type ExecutorData, type JobData, type StageData, sparkTime } from '../status/sparkJson.js';
import { bar, type Span, timeScale } from '../status/timelineLayout.js';
import { useDashboard } from './context.js';

const WIDTH = 1000;
const LABEL = 110;
const ROW = 22;
/** Stage rows drawn at most (the most recent); the stages table lists them all. */
const MAX_STAGE_ROWS = 40;

/**
 * Spark's event timeline in one figure: executors added (▲) and removed (▼), then each job and
 * each stage attempt as a bar over time (a running one reaching now), coloured by status and
 * linked to its page. The figure's summary is its label, for screen readers.
 */
export function Timeline({
  appId,
  jobs,
  stages,
  executors,
}: {
  appId: string;
  jobs: JobData[];
  stages: StageData[];
  executors: ExecutorData[];
}) {
  const { now } = useDashboard();
  const jobSpans = jobs
    .map((j) => ({ j, s: span(j.submissionTime, j.completionTime) }))
    .filter((x): x is { j: JobData; s: Span } => x.s !== undefined)
    .sort((a, b) => a.j.jobId - b.j.jobId);
  const stageSpans = stages
    .map((st) => ({ st, s: span(st.submissionTime, st.completionTime) }))
    .filter((x): x is { st: StageData; s: Span } => x.s !== undefined)
    .sort((a, b) => a.s.start - b.s.start)
    .slice(-MAX_STAGE_ROWS);
  const marks = executors.flatMap((e) => [
    ...(sparkTime(e.addTime) !== undefined
      ? [{ id: e.id, t: sparkTime(e.addTime) as number, added: true, why: '' }]
      : []),
    ...(sparkTime(e.removeTime) !== undefined
      ? [
          {
            id: e.id,
            t: sparkTime(e.removeTime) as number,
            added: false,
            why: e.removeReason ?? '',
          },
        ]
      : []),
  ]);
  const all: Span[] = [
    ...jobSpans.map((x) => x.s),
    ...stageSpans.map((x) => x.s),
    ...marks.map((m) => ({ start: m.t, end: m.t })),
  ];
  if (all.length === 0) return <p class="empty">Nothing has happened yet.</p>;
  const plot = WIDTH - LABEL - 10;
  const scale = timeScale(all, now, plot);
  const rows = 1 + jobSpans.length + stageSpans.length;
  const height = rows * ROW + 30;
  const label = `Event timeline from ${formatDate(scale.start)}: ${marks.filter((m) => m.added).length} executors added, ${marks.filter((m) => !m.added).length} removed, ${jobSpans.length} jobs, ${stageSpans.length} stage attempts`;
  const y = (i: number) => i * ROW + 4;
  return (
    <div class="timeline">
      <svg viewBox={`0 0 ${WIDTH} ${height}`} role="img" aria-label={label} class="timeline-svg">
        <title>{label}</title>
        {scale.ticks.map((t) => (
          <g key={t.t}>
            <line class="tl-grid" x1={LABEL + t.x} x2={LABEL + t.x} y1={0} y2={height - 24} />
            <text class="tl-tick" x={LABEL + t.x} y={height - 8} text-anchor="middle">
              {`+${formatDuration(t.t - scale.start)}`}
            </text>
          </g>
        ))}
        <text class="tl-label" x={4} y={y(0) + 14}>
          Executors
        </text>
        {marks.map((m) => (
          <g key={`${m.id}-${m.added}`} class={m.added ? 'tl-added' : 'tl-removed'}>
            <title>{`Executor ${m.id} ${m.added ? 'added' : 'removed'} at ${formatDate(m.t)}${m.why ? `: ${m.why}` : ''}`}</title>
            <path
              d={
                m.added
                  ? `M${LABEL + scale.x(m.t)},${y(0) + 3} l5,12 l-10,0 z`
                  : `M${LABEL + scale.x(m.t)},${y(0) + 15} l5,-12 l-10,0 z`
              }
            />
          </g>
        ))}
        {jobSpans.map(({ j, s }, i) => {
          const b = bar(scale, s, now);
          return (
            <a key={`j${j.jobId}`} href={href({ name: 'job', appId, jobId: j.jobId })}>
              <text class="tl-label" x={4} y={y(1 + i) + 14}>{`Job ${j.jobId}`}</text>
              <rect
                class={`tl-bar tl-${j.status.toLowerCase()}`}
                x={LABEL + b.x}
                y={y(1 + i) + 2}
                width={b.width}
                height={ROW - 6}
                rx={3}
              >
                <title>{`Job ${j.jobId} ${j.status}, ${formatDuration((s.end ?? now) - s.start)}`}</title>
              </rect>
            </a>
          );
        })}
        {stageSpans.map(({ st, s }, i) => {
          const b = bar(scale, s, now);
          const row = 1 + jobSpans.length + i;
          return (
            <a
              key={`s${st.stageId}.${st.attemptId}`}
              href={href({ name: 'stage', appId, stageId: st.stageId, attemptId: st.attemptId })}
            >
              <text class="tl-label" x={4} y={y(row) + 14}>
                {`Stage ${st.stageId}${st.attemptId > 0 ? ` (retry ${st.attemptId})` : ''}`}
              </text>
              <rect
                class={`tl-bar tl-stage tl-${st.status.toLowerCase()}`}
                x={LABEL + b.x}
                y={y(row) + 4}
                width={b.width}
                height={ROW - 10}
                rx={2}
              >
                <title>{`Stage ${st.stageId}.${st.attemptId} ${st.status}: ${st.name}, ${formatDuration((s.end ?? now) - s.start)}`}</title>
              </rect>
            </a>
          );
        })}
      </svg>
    </div>
  );
}

function span(start: string | undefined, end: string | undefined): Span | undefined {
  const s = sparkTime(start);
  if (s === undefined) return undefined;
  const e = sparkTime(end);
  return e === undefined ? { start: s } : { start: s, end: e };
}
