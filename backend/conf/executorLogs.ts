import { parseSizeBytes } from './parse.js';
import { conf, define } from './WickConf.js';

/** Spark's minimum size (RollingFileAppender.DEFAULT_BUFFER_SIZE × 10) and interval (60 s). */
export const MINIMUM_SIZE_BYTES = 8192 * 10;
export const MINIMUM_INTERVAL_MS = 60_000;

/** Which fields of the time a rolled file's suffix carries (Spark's SimpleDateFormat patterns). */
export type SuffixPattern = 'day' | 'hour' | 'minute' | 'second' | 'millisecond';

/** Spark's spark.executor.logs.rolling.time.interval: daily, hourly, minutely, or seconds. */
export function parseRollingInterval(raw: string): { intervalMs: number; pattern: SuffixPattern } {
  const v = raw.trim().toLowerCase();
  if (v === 'daily') return { intervalMs: 24 * 3_600_000, pattern: 'day' };
  if (v === 'hourly') return { intervalMs: 3_600_000, pattern: 'hour' };
  if (v === 'minutely') return { intervalMs: 60_000, pattern: 'minute' };
  if (/^\d{1,10}$/.test(v) && Number(v) * 1000 >= MINIMUM_INTERVAL_MS)
    return { intervalMs: Number(v) * 1000, pattern: 'second' };
  throw new Error(
    `expected daily, hourly, minutely or a number of seconds of at least ${MINIMUM_INTERVAL_MS / 1000}, got "${raw}"`,
  );
}

/**
 * How a worker rolls the stdout and stderr of its executors and cluster-mode drivers (Spark's
 * spark.executor.logs.rolling.*, read under Spark's names too): a worker setting, as in Spark.
 */
export const ExecutorLogsConf = {
  strategy: define(
    'wick.executor.logs.rolling.strategy',
    '',
    'Roll executor logs: "time" (every wick.executor.logs.rolling.time.interval), "size" (past wick.executor.logs.rolling.maxSize), or empty for none (the default, as Spark). Rolled files are named as Spark names them (stdout--2026-12-07--00-09-04--0123); readers (wick logs, the log API, the dashboard) read across them. A rolling worker pipes its children\'s output through itself, so it starts no executor ahead (wick.worker.executor.prestart).',
    (raw) => {
      const v = raw.trim().toLowerCase();
      if (v === '' || v === 'time' || v === 'size') return v;
      throw new Error(`expected "time", "size" or empty (no rolling), got "${raw}"`);
    },
  ),
  timeInterval: define(
    'wick.executor.logs.rolling.time.interval',
    'daily',
    'With the time strategy: daily, hourly, minutely, or a number of seconds (at least 60, as Spark).',
    parseRollingInterval,
  ),
  maxSize: define(
    'wick.executor.logs.rolling.maxSize',
    '1048576',
    `With the size strategy: the most bytes in one file (a bare number is bytes, as Spark; at least ${MINIMUM_SIZE_BYTES}, Spark's minimum).`,
    (raw) => {
      const n = parseSizeBytes(raw);
      if (n < MINIMUM_SIZE_BYTES || n > 2 ** 50) {
        throw new Error(`expected a size of at least ${MINIMUM_SIZE_BYTES} bytes, got "${raw}"`);
      }
      return n;
    },
  ),
  maxRetainedFiles: conf.int(
    'wick.executor.logs.rolling.maxRetainedFiles',
    -1,
    'Rolled files kept per log, the newest; the older are deleted (0 or less keeps all, the default). Offsets into a log keep counting the deleted bytes.',
    -1,
    1_000_000,
  ),
  enableCompression: conf.bool(
    'wick.executor.logs.rolling.enableCompression',
    false,
    'Compress rolled files with gzip (name.gz); readers decompress them.',
  ),
};
