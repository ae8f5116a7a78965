/**
 * The event timeline's geometry (Spark's "Event Timeline"): a time span mapped onto a width,
 * bars for jobs and stages (a running one reaches `now`), markers for executors added and
 * removed, and ticks. Pure, for the SVG in components/Timeline.tsx.
 */

export interface Span {
  start: number;
  end?: number;
}

export interface TimeScale {
  start: number;
  end: number;
  x(t: number): number;
  ticks: { t: number; x: number }[];
}

/** The span covering every item (a running one until `now`), mapped onto [0, width]. */
export function timeScale(items: readonly Span[], now: number, width: number, tickCount = 6) {
  const starts = items.map((i) => i.start);
  const ends = items.map((i) => i.end ?? now);
  let start = Math.min(...starts);
  let end = Math.max(...ends, ...starts);
  if (!Number.isFinite(start)) start = now;
  if (!Number.isFinite(end) || end <= start) end = start + 1000;
  const x = (t: number) => ((Math.min(Math.max(t, start), end) - start) / (end - start)) * width;
  const step = niceStep((end - start) / tickCount);
  const ticks: { t: number; x: number }[] = [];
  for (let t = Math.ceil(start / step) * step; t <= end; t += step) ticks.push({ t, x: x(t) });
  return { start, end, x, ticks } satisfies TimeScale;
}

/** A bar's left and width, at least `min` wide so that a short task still shows. */
export function bar(scale: TimeScale, span: Span, now: number, min = 2) {
  const left = scale.x(span.start);
  const right = scale.x(span.end ?? now);
  return { x: left, width: Math.max(min, right - left) };
}

/** 1, 2 or 5 × a power of ten ms, the nearest above `raw`. */
export function niceStep(raw: number): number {
  const r = Math.max(1, raw);
  const p = 10 ** Math.floor(Math.log10(r));
  for (const m of [1, 2, 5, 10]) if (m * p >= r) return m * p;
  return 10 * p;
}
