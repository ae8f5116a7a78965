/**
 * Which event logs the cleaner deletes (Spark's FsHistoryProvider.cleanLogs, with
 * spark.history.fs.cleaner.maxAge and maxNum): every log not modified for maxAge, whatever it is
 * (a running application's too: its driver is gone by then; and a file that is no event log but
 * is named as one); then, while more than maxNum logs are left, the oldest completed
 * applications' logs. A running application's log is never deleted for the count alone. Pure:
 * the provider stats the files and deletes what this returns.
 */

export interface CleanCandidate {
  name: string;
  mtimeMs: number;
  /** true: an application's completed log; false: a running one's; undefined: unreadable. */
  completed: boolean | undefined;
}

export function logsToClean(
  logs: readonly CleanCandidate[],
  now: number,
  maxAgeMs: number,
  maxNum: number,
): string[] {
  const cutoff = now - maxAgeMs;
  const gone = new Set(logs.filter((l) => l.mtimeMs < cutoff).map((l) => l.name));
  let left = logs.length - gone.size;
  if (left > maxNum) {
    const oldestFirst = logs
      .filter((l) => !gone.has(l.name) && l.completed === true)
      .sort((a, b) => a.mtimeMs - b.mtimeMs || a.name.localeCompare(b.name));
    for (const l of oldestFirst) {
      if (left <= maxNum) break;
      gone.add(l.name);
      left--;
    }
  }
  return [...gone].sort();
}
