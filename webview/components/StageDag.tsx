/** @jsxRuntime automatic */
/** @jsxImportSource preact */
import { href } from '../router.js';
import { layoutDag } from '../status/dagLayout.js';
import type { StageData } from '../status/sparkJson.js';

const W = 170;
const H = 52;
const GAP_X = 60;
const GAP_Y = 18;

/**
 * A job's stages and which reads whose shuffle output, left to right (Spark's DAG
 * visualization, at the stage level): each node its stage's latest attempt, with its status and
 * tasks; a stage the job listed but did not run (its output was there) is drawn as skipped.
 */
export function StageDag({
  appId,
  stageIds,
  stages,
  known,
  running,
}: {
  appId: string;
  stageIds: number[];
  /** The job's own stage attempts. */
  stages: StageData[];
  /** Attempts of its stages in any job, for their parents. */
  known: StageData[];
  running: boolean;
}) {
  const latest = new Map<number, StageData>();
  const parents = new Map<number, number[]>();
  for (const s of stages) {
    const had = latest.get(s.stageId);
    if (!had || s.attemptId > had.attemptId) latest.set(s.stageId, s);
  }
  for (const s of [...known, ...stages]) if (s.parentIds) parents.set(s.stageId, s.parentIds);
  const layout = layoutDag(
    stageIds.map((id) => ({ stageId: id, parentIds: parents.get(id) ?? [] })),
  );
  const pos = new Map(
    layout.nodes.map((n) => [
      n.stageId,
      { x: n.column * (W + GAP_X) + 8, y: n.row * (H + GAP_Y) + 8 },
    ]),
  );
  const width = Math.max(1, layout.columns) * (W + GAP_X) - GAP_X + 16;
  const height = Math.max(1, layout.rows) * (H + GAP_Y) - GAP_Y + 16;
  const label = `DAG of ${stageIds.length} stages: ${layout.edges.map((e) => `stage ${e.from} feeds stage ${e.to}`).join(', ') || 'no shuffle between them'}`;
  return (
    <div class="dag">
      <svg
        viewBox={`0 0 ${width} ${height}`}
        width={width}
        height={height}
        role="img"
        aria-label={label}
        class="dag-svg"
      >
        <title>{label}</title>
        <defs>
          <marker
            id="dag-arrow"
            viewBox="0 0 10 10"
            refX="10"
            refY="5"
            markerWidth="7"
            markerHeight="7"
            orient="auto"
          >
            <path d="M0,0 L10,5 L0,10 z" class="dag-arrowhead" />
          </marker>
        </defs>
        {layout.edges.map((e) => {
          const a = pos.get(e.from);
          const b = pos.get(e.to);
          if (!a || !b) return null;
          const x1 = a.x + W;
          const y1 = a.y + H / 2;
          const x2 = b.x;
          const y2 = b.y + H / 2;
          const mid = (x1 + x2) / 2;
          return (
            <path
              key={`${e.from}-${e.to}`}
              class="dag-edge"
              data-edge={`${e.from}-${e.to}`}
              d={`M${x1},${y1} C${mid},${y1} ${mid},${y2} ${x2},${y2}`}
              marker-end="url(#dag-arrow)"
            />
          );
        })}
        {layout.nodes.map((n) => {
          const p = pos.get(n.stageId) ?? { x: 0, y: 0 };
          const s = latest.get(n.stageId);
          const status = s?.status ?? (running ? 'PENDING' : 'SKIPPED');
          const body = (
            <g data-stage-node={n.stageId}>
              <rect
                class={`dag-node dag-${status.toLowerCase()}`}
                x={p.x}
                y={p.y}
                width={W}
                height={H}
                rx={6}
              />
              <text class="dag-title" x={p.x + 10} y={p.y + 20}>
                {`Stage ${n.stageId}${s && s.attemptId > 0 ? ` (attempt ${s.attemptId})` : ''}`}
              </text>
              <text class="dag-sub" x={p.x + 10} y={p.y + 40}>
                {s ? `${status} · ${s.numCompleteTasks}/${s.numTasks} tasks` : status}
              </text>
            </g>
          );
          return s ? (
            <a
              key={n.stageId}
              href={href({ name: 'stage', appId, stageId: n.stageId, attemptId: s.attemptId })}
            >
              {body}
            </a>
          ) : (
            <g key={n.stageId}>{body}</g>
          );
        })}
      </svg>
    </div>
  );
}
