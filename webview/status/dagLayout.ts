/**
 * A job's stages as a graph: each stage placed in the column after its last parent (roots in
 * the first), so that every edge points rightwards, as Spark's DAG visualization reads left to
 * right; rows by stage id within a column. Pure, for the job page's SVG.
 */

export interface DagInput {
  stageId: number;
  parentIds: readonly number[];
}

export interface DagNode {
  stageId: number;
  column: number;
  row: number;
}

export interface DagLayout {
  nodes: DagNode[];
  /** parent → child, both in the job. */
  edges: { from: number; to: number }[];
  columns: number;
  rows: number;
}

export function layoutDag(stages: readonly DagInput[]): DagLayout {
  const byId = new Map(stages.map((s) => [s.stageId, s]));
  const column = new Map<number, number>();
  // Depth-first with a guard: a cycle (a bad report) cannot hang the page; its back edge is
  // laid out as if absent.
  const visiting = new Set<number>();
  const place = (id: number): number => {
    const known = column.get(id);
    if (known !== undefined) return known;
    if (visiting.has(id)) return 0;
    visiting.add(id);
    const s = byId.get(id);
    let c = 0;
    for (const p of s?.parentIds ?? []) if (byId.has(p)) c = Math.max(c, place(p) + 1);
    visiting.delete(id);
    column.set(id, c);
    return c;
  };
  const ids = [...byId.keys()].sort((a, b) => a - b);
  for (const id of ids) place(id);
  const rowsInColumn = new Map<number, number>();
  const nodes = ids.map((stageId) => {
    const c = column.get(stageId) ?? 0;
    const row = rowsInColumn.get(c) ?? 0;
    rowsInColumn.set(c, row + 1);
    return { stageId, column: c, row };
  });
  const edges = stages.flatMap((s) =>
    [...new Set(s.parentIds)]
      .filter((p) => byId.has(p) && p !== s.stageId)
      .map((p) => ({ from: p, to: s.stageId })),
  );
  return {
    nodes,
    edges,
    columns: Math.max(0, ...nodes.map((n) => n.column + 1)),
    rows: Math.max(0, ...rowsInColumn.values()),
  };
}
