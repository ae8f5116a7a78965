/** @jsxRuntime automatic */
/** @jsxImportSource preact */
import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import { UTILIZATION_WINDOW_MS } from '../../backend/shared/utilization.js';
import { formatMiB, formatMiBShort } from '../format.js';
import type { UtilizationSample } from '../protocol.js';

/**
 * Cores and memory in use over the last minutes, as steps between the changes the master pushed,
 * with the totals dashed. uPlot draws on a canvas, so the figure's meaning is also given in words
 * (role="img" and its label) for screen readers. Colours come from CSS variables, so the chart
 * follows the page's theme and VS Code's.
 */
export function UtilizationChart({
  samples,
  now,
  windowMs = UTILIZATION_WINDOW_MS,
}: {
  samples: UtilizationSample[];
  now: number;
  windowMs?: number;
}) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const theme = useThemeVersion();
  const last = samples[samples.length - 1];
  const label = utilizationLabel(samples, windowMs);

  // Built once per theme; the data and the window are set below on every change.
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const css = getComputedStyle(el);
    const color = (name: string, fallback: string) => css.getPropertyValue(name).trim() || fallback;
    const fg = color('--wick-chart-axis', '#888');
    const grid = color('--wick-chart-grid', 'rgba(128,128,128,0.2)');
    const cores = color('--wick-chart-cores', '#3794ff');
    const mem = color('--wick-chart-memory', '#d18616');
    const step = uPlot.paths.stepped?.({ align: 1 });
    const axis = {
      stroke: fg,
      grid: { stroke: grid, width: 1 },
      ticks: { stroke: grid, width: 1 },
    };
    const u = new uPlot(
      {
        width: Math.max(200, el.clientWidth),
        height: 220,
        cursor: { drag: { x: false, y: false } },
        // The legend names the series; the summary above gives the values now.
        legend: { live: false },
        scales: {
          x: { time: true },
          cores: { range: (_u, _min, max) => [0, Math.max(1, max) * 1.15] },
          mem: { range: (_u, _min, max) => [0, Math.max(1, max) * 1.15] },
        },
        axes: [
          { ...axis },
          { ...axis, scale: 'cores', label: 'Cores', size: 50 },
          {
            ...axis,
            scale: 'mem',
            side: 1,
            label: 'Memory',
            // MiB in powers of two, so that ticks fall on 512 MiB, 1 GiB, 2 GiB…
            incrs: Array.from({ length: 31 }, (_, i) => 2 ** i),
            size: 80,
            gap: 6,
            grid: { show: false },
            values: (_u, splits) => splits.map((v) => formatMiBShort(v)),
          },
        ],
        series: [
          {},
          {
            label: 'Cores in use',
            scale: 'cores',
            stroke: cores,
            width: 2,
            paths: step,
            points: { show: false },
          },
          {
            label: 'Memory in use',
            scale: 'mem',
            stroke: mem,
            width: 2,
            paths: step,
            points: { show: false },
            value: (_u, v) => (v == null ? '-' : formatMiB(v)),
          },
          {
            label: 'Cores total',
            scale: 'cores',
            stroke: cores,
            width: 1,
            dash: [4, 4],
            paths: step,
            points: { show: false },
          },
          {
            label: 'Memory total',
            scale: 'mem',
            stroke: mem,
            width: 1,
            dash: [4, 4],
            paths: step,
            points: { show: false },
            value: (_u, v) => (v == null ? '-' : formatMiB(v)),
          },
        ],
      },
      [[], [], [], [], []],
      el,
    );
    plot.current = u;
    const resize = new ResizeObserver(() =>
      u.setSize({ width: Math.max(200, el.clientWidth), height: 220 }),
    );
    resize.observe(el);
    return () => {
      resize.disconnect();
      u.destroy();
      plot.current = null;
    };
  }, [theme]);

  useEffect(() => {
    const u = plot.current;
    if (!u) return;
    // The window grows from the first sample (at least a minute) up to windowMs.
    const first = samples[0]?.time ?? now;
    const from = Math.max(now - windowMs, Math.min(first, now - 60_000));
    const xs: number[] = [];
    const series: number[][] = [[], [], [], []];
    const push = (t: number, s: UtilizationSample) => {
      xs.push(t / 1000);
      series[0]?.push(s.coresUsed);
      series[1]?.push(s.memoryUsed);
      series[2]?.push(s.cores);
      series[3]?.push(s.memory);
    };
    for (const s of samples) push(Math.max(s.time, from), s);
    // The last value holds until now.
    if (last) push(Math.max(now, last.time), last);
    u.batch(() => {
      u.setData([xs, ...series] as uPlot.AlignedData, false);
      u.setScale('x', { min: from / 1000, max: now / 1000 });
    });
  }, [samples, now, theme, windowMs, last]);

  return (
    <figure class="chart">
      <div ref={box} class="chart-box" role="img" aria-label={label} />
      <figcaption class="sr-only">{label}</figcaption>
    </figure>
  );
}

/** The chart in words: the values now and the most in use over the window, which the lines show. */
export function utilizationLabel(samples: UtilizationSample[], windowMs: number): string {
  const last = samples[samples.length - 1];
  if (!last) return 'Cluster utilization: no data yet.';
  const peakCores = Math.max(...samples.map((s) => s.coresUsed));
  const peakMemory = Math.max(...samples.map((s) => s.memoryUsed));
  return `Cluster utilization over the last ${Math.round(windowMs / 60000)} minutes. Now: ${last.coresUsed} of ${last.cores} cores and ${formatMiB(last.memoryUsed)} of ${formatMiB(last.memory)} in use. Peak: ${peakCores} cores and ${formatMiB(peakMemory)}.`;
}

/** Changes when the colour scheme or VS Code's theme (a class on body) changes. */
function useThemeVersion(): number {
  const [version, setVersion] = useState(0);
  useEffect(() => {
    const bump = () => setVersion((v) => v + 1);
    const media = matchMedia('(prefers-color-scheme: dark)');
    media.addEventListener('change', bump);
    const observer = new MutationObserver(bump);
    observer.observe(document.body, { attributes: true, attributeFilter: ['class'] });
    return () => {
      media.removeEventListener('change', bump);
      observer.disconnect();
    };
  }, []);
  return version;
}
