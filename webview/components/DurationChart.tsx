/** @jsxRuntime automatic */
/** @jsxImportSource preact */
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import { formatDuration } from '../format.js';

/**
 * How long a stage's tasks took: each task's duration against the share of tasks that took at
 * most that long (quantiles from /api/v1's taskSummary), so a straggler shows as the right end
 * rising. Drawn by uPlot on a canvas; its summary is the figure's label for screen readers.
 */
export function DurationChart({
  quantiles,
  durations,
}: {
  quantiles: number[];
  durations: number[];
}) {
  const box = useRef<HTMLDivElement>(null);
  const label = `Task durations: median ${formatDuration(at(quantiles, durations, 0.5))}, slowest ${formatDuration(Math.max(0, ...durations))}`;
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const css = getComputedStyle(el);
    const color = (name: string, fallback: string) => css.getPropertyValue(name).trim() || fallback;
    const fg = color('--wick-chart-axis', '#888');
    const grid = color('--wick-chart-grid', 'rgba(128,128,128,0.2)');
    const line = color('--wick-chart-cores', '#3794ff');
    const axis = {
      stroke: fg,
      grid: { stroke: grid, width: 1 },
      ticks: { stroke: grid, width: 1 },
    };
    const u = new uPlot(
      {
        width: Math.max(200, el.clientWidth),
        height: 200,
        cursor: { drag: { x: false, y: false } },
        legend: { show: false },
        scales: {
          x: { time: false, range: [0, 100] },
          y: { range: (_u, _min, max) => [0, Math.max(1, max) * 1.1] },
        },
        axes: [
          {
            ...axis,
            label: 'Tasks (%) that took at most',
            values: (_u, v) => v.map((x) => `${x}%`),
          },
          {
            ...axis,
            label: 'Duration',
            size: 70,
            values: (_u, v) => v.map((x) => formatDuration(x)),
          },
        ],
        series: [
          {},
          { label: 'Duration', stroke: line, width: 2, fill: `${line}22`, points: { show: false } },
        ],
      },
      [quantiles.map((q) => q * 100), durations],
      el,
    );
    const resize = new ResizeObserver(() =>
      u.setSize({ width: Math.max(200, el.clientWidth), height: 200 }),
    );
    resize.observe(el);
    return () => {
      resize.disconnect();
      u.destroy();
    };
  }, [quantiles, durations]);
  return (
    <figure class="chart" role="img" aria-label={label}>
      <div ref={box} class="chart-box" />
    </figure>
  );
}

/** The duration at quantile `q` (the nearest listed). */
export function at(quantiles: number[], durations: number[], q: number): number {
  let best = 0;
  for (let i = 0; i < quantiles.length; i++)
    if (Math.abs((quantiles[i] ?? 0) - q) < Math.abs((quantiles[best] ?? 0) - q)) best = i;
  return durations[best] ?? 0;
}
