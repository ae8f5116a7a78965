/** @jsxRuntime automatic */
/** @jsxImportSource preact */

/**
 * Spark's task progress bar: completed tasks filled, running ones lighter after them, the count
 * written over it ("3/5 (1 running) (1 failed)"), the same words for screen readers.
 */
export function ProgressBar({
  completed,
  active,
  failed,
  total,
  skipped = 0,
}: {
  completed: number;
  active: number;
  failed: number;
  total: number;
  skipped?: number;
}) {
  const of = Math.max(1, total);
  const pct = (n: number) => `${Math.min(100, (n / of) * 100).toFixed(1)}%`;
  const text = [
    `${completed}/${total}`,
    active > 0 ? `(${active} running)` : '',
    failed > 0 ? `(${failed} failed)` : '',
    skipped > 0 ? `(${skipped} skipped)` : '',
  ]
    .filter(Boolean)
    .join(' ');
  return (
    <div
      class="progress"
      role="progressbar"
      aria-valuemin={0}
      aria-valuemax={total}
      aria-valuenow={completed}
      aria-valuetext={text}
    >
      <div class="progress-done" style={{ width: pct(completed) }} />
      <div class="progress-running" style={{ width: pct(Math.min(active, total - completed)) }} />
      <span class="progress-text">{text}</span>
    </div>
  );
}
