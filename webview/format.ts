/** How the dashboard writes sizes, times and durations (Spark's master page conventions). */

/** MiB as Spark's Utils.megabytesToString: "512.0 MiB", "1024.0 MiB", "2.0 GiB". */
export function formatMiB(mib: number): string {
  if (mib >= 1024 * 1024) return `${(mib / (1024 * 1024)).toFixed(1)} TiB`;
  if (mib >= 1024) return `${(mib / 1024).toFixed(1)} GiB`;
  return `${mib.toFixed(1)} MiB`;
}

/** Bytes, for log sizes. */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MiB`;
}

/** "2026/11/30 12:00:00", Spark's date format, in local time. */
export function formatDate(ms: number): string {
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}/${p(d.getMonth() + 1)}/${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/** "850 ms", "12 s", "3.2 min", "1.5 h", as Spark's UIUtils.formatDuration. */
export function formatDuration(ms: number): string {
  // A clock a little behind the master's (the display clock ticks once a second) reads as 0.
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  const s = ms / 1000;
  if (s < 60) return `${Math.floor(s)} s`;
  const min = s / 60;
  if (min < 60) return `${min.toFixed(1)} min`;
  const h = min / 60;
  if (h < 24) return `${h.toFixed(1)} h`;
  return `${(h / 24).toFixed(1)} d`;
}

/** "ALIVE" → "alive": for CSS classes. */
export function stateClass(state: string): string {
  return `state state-${state.toLowerCase()}`;
}

/** A chart axis label: "512 MiB", "1.5 GiB". */
export function formatMiBShort(mib: number): string {
  if (mib >= 1024) return `${Number((mib / 1024).toFixed(1))} GiB`;
  return `${Math.round(mib)} MiB`;
}
