/**
 * Spark's console progress bar as text (ConsoleProgressBar.scala): one segment per active stage,
 * `[Stage 3:=====>      (120 + 4) / 400]`, the line's width shared between at most three stages.
 * Pure, so that the terminal (cli/), and whatever else shows a stage's progress in words, draw the
 * same thing from the same numbers.
 */

export interface StageProgress {
  stageId: number;
  numTasks: number;
  numActiveTasks: number;
  numCompletedTasks: number;
}

/** At most this many stages share the line, as Spark's. */
export const MAX_STAGES_SHOWN = 3;

/** The bar for `stages` in `width` columns ('' for none). */
export function renderProgressBar(stages: readonly StageProgress[], width: number): string {
  const shown = stages.slice(0, MAX_STAGES_SHOWN);
  if (shown.length === 0) return '';
  const each = Math.floor(width / shown.length);
  return shown.map((s) => segment(s, each)).join('');
}

function segment(s: StageProgress, width: number): string {
  const total = Math.max(0, s.numTasks);
  const done = Math.min(total, Math.max(0, s.numCompletedTasks));
  const header = `[Stage ${s.stageId}:`;
  const tailer = `(${done} + ${Math.max(0, s.numActiveTasks)}) / ${total}]`;
  const w = width - header.length - tailer.length;
  if (w <= 0) return header + tailer;
  const filled = total === 0 ? w : Math.floor((w * done) / total);
  let bar = '';
  for (let i = 0; i < w; i++) bar += i < filled ? '=' : i === filled ? '>' : ' ';
  return header + bar + tailer;
}
