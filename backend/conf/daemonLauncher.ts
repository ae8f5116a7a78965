import { parseDurationMs } from './parse.js';
import { define } from './WickConf.js';

const seconds = (key: string, dflt: string, doc: string) =>
  define(key, dflt, doc, (raw) => parseDurationMs(raw, 's'));

/**
 * The daemon launcher's settings (`wick start-master`, `wick stop-worker`, …; Spark's
 * spark-daemon.sh). Where its files go is told by environment variables, as Spark's are
 * (WICK_PID_DIR, WICK_LOG_DIR: backend/launcher/daemon/daemonFiles.ts), since they must be known
 * before any properties file is found.
 */
export const DaemonLauncherConf = {
  startTimeout: seconds(
    'wick.daemon.startTimeout',
    '120s',
    'How long `wick start-*` waits for a daemon it started to say it is serving before it reports a failed start (the daemon is then stopped).',
  ),
  stopTimeout: seconds(
    'wick.daemon.stopTimeout',
    '30s',
    '`wick stop-*` sends SIGTERM, then SIGKILL when the daemon is still there this long after (a worker first stops its executors).',
  ),
};
