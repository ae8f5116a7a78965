import { parseDurationMs, parseInteger } from './parse.js';
import { conf, define } from './WickConf.js';

/**
 * The history service's settings (Spark's spark.history.*, under the same names with wick. for
 * spark.: a spark-defaults.conf of a Spark history server works as it is). Durations given under
 * Spark's names as a bare number are seconds, as Spark reads them (sparkNames.ts).
 */
export const HistoryConf = {
  logDirectory: conf.string(
    'wick.history.fs.logDirectory',
    '',
    'The event logs the history service lists (`wick history`, `wick history-server`, `wick status <app-id>`); empty: wick.eventLog.dir, else $XDG_STATE_HOME/wick/event-logs. A file: URL is taken as its path.',
  ),
  updateInterval: define(
    'wick.history.fs.update.interval',
    '10s',
    'How often `wick history-server` looks for new or changed event logs; a log whose size and modification time have not changed is not read again.',
    (raw) => parseDurationMs(raw),
  ),
  retainedApplications: conf.int(
    'wick.history.retainedApplications',
    50,
    'Applications whose events `wick history-server` keeps loaded (their jobs and stages), the least recently opened dropped first; the listing itself holds every application.',
    1,
    100_000,
  ),
  endEventReparseChunkSize: conf.sizeBytes(
    'wick.history.fs.endEventReparseChunkSize',
    '1m',
    'How much of the end of an uncompressed event log is read to find its ApplicationEnd when listing applications (a gzip log is read through); 0: read every log through.',
  ),
  cleanerEnabled: conf.bool(
    'wick.history.fs.cleaner.enabled',
    false,
    "Delete old event logs from wick.history.fs.logDirectory while `wick history-server` runs (Spark's spark.history.fs.cleaner.enabled).",
  ),
  cleanerInterval: define(
    'wick.history.fs.cleaner.interval',
    '1d',
    'How often the cleaner runs (wick.history.fs.cleaner.enabled).',
    (raw) => parseDurationMs(raw),
  ),
  cleanerMaxAge: define(
    'wick.history.fs.cleaner.maxAge',
    '7d',
    "The cleaner deletes event logs not modified for this long, running applications' too (their drivers are gone by then), and files that are no event log.",
    (raw) => parseDurationMs(raw),
  ),
  cleanerMaxNum: define(
    'wick.history.fs.cleaner.maxNum',
    '2147483647',
    "The most event logs the cleaner leaves in the directory: past it, the oldest completed applications' logs go first (running ones are kept).",
    (raw) => parseInteger(raw, 1, 2147483647),
  ),
  uiPort: conf.int(
    'wick.history.ui.port',
    18080,
    "`wick history-server`'s port (Spark's 18080; 0: any free port).",
    0,
    65535,
  ),
  uiHost: conf.string(
    'wick.history.ui.host',
    '',
    "The address `wick history-server` binds (--host); empty: this machine's name, as `wick master` binds its web UI.",
  ),
};
