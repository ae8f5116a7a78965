/**
 * The pure part of executor log rolling (Spark's RollingPolicy, RollingFileAppender's file names
 * and Utils.offsetBytes over several files), apart from any file system so it is tested alone.
 *
 * A log is its rolled-over files, oldest first, then the active file (`stdout`): a rolled file is
 * named the active one + `--` + the time it was rolled, as Spark names it (size:
 * `stdout--2026-12-07--00-09-04--0123`, time: `stdout--2026-12-07` daily, `…--00` hourly,
 * `…--00-09` minutely, `…--00-09-04` for an interval in seconds), `.gz` after it once compressed.
 * Offsets run over the concatenation, as Spark's log page reads it, counted from the first byte the
 * process ever wrote: bytes of files deleted past wick.executor.logs.rolling.maxRetainedFiles are
 * still counted (`removed`), so that an offset a reader holds keeps naming the same byte while old
 * files go — a follow or a paging client neither skips nor repeats (Spark's offsets shift then).
 */

import type { SuffixPattern } from '../conf/executorLogs.js';

export const GZIP_SUFFIX = '.gz';

export type RollingStrategy =
  | { kind: 'size'; maxBytes: number }
  | { kind: 'time'; intervalMs: number; pattern: SuffixPattern };

/** The suffix of a file rolled at `ms` (local time), e.g. `--2026-12-07--00-09-04--0123`. */
export function rolledSuffix(ms: number, pattern: SuffixPattern): string {
  const d = new Date(ms);
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  let s = `--${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}`;
  if (pattern === 'day') return s;
  s += `--${p(d.getHours())}`;
  if (pattern === 'hour') return s;
  s += `-${p(d.getMinutes())}`;
  if (pattern === 'minute') return s;
  s += `-${p(d.getSeconds())}`;
  if (pattern === 'second') return s;
  // Spark's size policy: SimpleDateFormat "--SSSS", milliseconds in 4 digits.
  return `${s}--${p(d.getMilliseconds(), 4)}`;
}

/** Spark's TimeBasedRollingPolicy: the next multiple of the interval after `now`. */
export function nextRolloverTime(now: number, intervalMs: number): number {
  return Math.ceil((now + 1) / intervalMs) * intervalMs;
}

/**
 * The rolled-over files of `active` among `names`, oldest first (Spark's
 * getSortedRolledOverFiles: by name without `.gz`). A file present both compressed and not (a
 * compression that has not yet removed its source) is listed once, uncompressed.
 */
export function sortRolledOver(names: readonly string[], active: string): string[] {
  const prefix = `${active}--`;
  const byBase = new Map<string, string>();
  for (const name of names) {
    if (!name.startsWith(prefix) || name.length > 255) continue;
    const base = name.endsWith(GZIP_SUFFIX) ? name.slice(0, -GZIP_SUFFIX.length) : name;
    const seen = byBase.get(base);
    if (seen === undefined || seen.endsWith(GZIP_SUFFIX)) byBase.set(base, name);
  }
  return [...byBase.keys()].sort(compareNames).map((b) => byBase.get(b) as string);
}

function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The files past `maxRetained` rolled ones, oldest first (to delete); none when maxRetained ≤ 0. */
export function filesToDelete(sortedRolled: readonly string[], maxRetained: number): string[] {
  if (maxRetained <= 0) return [];
  return sortedRolled.slice(0, Math.max(0, sortedRolled.length - maxRetained));
}

/** One piece of a read: `length` bytes from `from` in part `index`. */
export interface Span {
  index: number;
  from: number;
  length: number;
}

/**
 * Which bytes of which parts hold [start, end) of the concatenation (Spark's Utils.offsetBytes
 * over files), where the parts follow `removed` bytes no longer kept. Offsets are clamped into
 * [removed, removed + sum of sizes].
 */
export function spansOf(
  removed: number,
  sizes: readonly number[],
  start: number,
  end: number,
): Span[] {
  const spans: Span[] = [];
  let partStart = removed;
  for (let i = 0; i < sizes.length; i++) {
    const size = sizes[i] as number;
    const from = Math.max(start, partStart);
    const to = Math.min(end, partStart + size);
    if (to > from) spans.push({ index: i, from: from - partStart, length: to - from });
    partStart += size;
  }
  return spans;
}

/** The range a read of `length` bytes at `offset` covers (the last `length` without an offset). */
export function clampRange(
  removed: number,
  total: number,
  offset: number | undefined,
  length: number,
): { start: number; end: number } {
  const start =
    offset === undefined
      ? Math.max(removed, total - length)
      : Math.min(Math.max(offset, removed), total);
  return { start, end: Math.min(total, start + length) };
}
