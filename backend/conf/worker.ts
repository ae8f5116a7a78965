import { parseDurationMs } from './parse.js';
import { conf, define } from './WickConf.js';

/** MAX_RETAINED of backend/protocol/bounds.ts (conf imports nothing above util). */
const RETAINED_MAX = 100_000;

const seconds = (key: string, dflt: string, doc: string) =>
  define(key, dflt, doc, (raw) => parseDurationMs(raw, 's'));

/** The Worker's settings (Spark's spark.worker.*, as wick.*). */
export const WorkerConf = {
  initialRegistrationRetries: conf.int(
    'wick.worker.initialRegistrationRetries',
    6,
    'Registration attempts at the initial (short, randomised) interval before backing off.',
    0,
  ),
  maxRegistrationRetries: conf.int(
    'wick.worker.maxRegistrationRetries',
    16,
    'Registration attempts in all before the worker gives up and exits.',
    1,
  ),
  initialRegistrationInterval: seconds(
    'wick.worker.initialRegistrationInterval',
    '10s',
    'Base of the initial retry interval; each wait is this ×0.5 to ×1.5.',
  ),
  prolongedRegistrationInterval: seconds(
    'wick.worker.prolongedRegistrationInterval',
    '60s',
    'Base of the retry interval after the initial attempts; each wait is this ×0.5 to ×1.5.',
  ),
  killTimeout: seconds(
    'wick.worker.killTimeout',
    '10s',
    'SIGKILL a process tree this long after SIGTERM.',
  ),
  cleanupEnabled: conf.bool(
    'wick.worker.cleanup.enabled',
    false,
    "Delete finished applications' directories.",
  ),
  cleanupInterval: seconds(
    'wick.worker.cleanup.interval',
    '1800s',
    'How often to look for old directories.',
  ),
  appDataTtl: seconds(
    'wick.worker.cleanup.appDataTtl',
    '604800s',
    "Keep a finished application's directory until nothing in it changed for this long.",
  ),
  shuffleServiceEnabled: conf.bool(
    'wick.shuffle.service.enabled',
    false,
    "Run the external shuffle service (Spark's spark.shuffle.service.enabled): this worker serves its executors' map outputs, so that they outlive an executor that dies; the driver then reruns map tasks only when the worker itself is lost. A worker setting: every application on this worker uses it.",
  ),
  shuffleServicePort: conf.int(
    'wick.shuffle.service.port',
    7337,
    'Port of the external shuffle service (0: a free one; a busy one is retried upwards, wick.port.maxRetries times).',
    0,
    65535,
  ),
  retainedExecutors: conf.int(
    'wick.worker.ui.retainedExecutors',
    1000,
    'Finished executors kept.',
    0,
    RETAINED_MAX,
  ),
  retainedDrivers: conf.int(
    'wick.worker.ui.retainedDrivers',
    1000,
    'Finished drivers kept.',
    0,
    RETAINED_MAX,
  ),
  executorPrestart: conf.bool(
    'wick.worker.executor.prestart',
    true,
    "Keep one Wick executor process started ahead, so that a Wick application's executor runs in milliseconds instead of a Node start-up; launches of other commands are unaffected.",
  ),
  decommissionEnabled: conf.bool(
    'wick.decommission.enabled',
    false,
    "Whether SIGPWR decommissions the worker (Spark's spark.decommission.enabled) instead of killing it: it takes no new executors or drivers, lets its applications' running tasks finish, then exits. Off, SIGPWR ends the worker at once, as it did before. `wick decommission` and the master web UI's POST /workers/kill/ decommission a worker whatever this says: an operator asked the master, which already passes the worker over.",
  ),
  decommissionForceKillTimeout: seconds(
    'wick.worker.decommission.forceKillTimeout',
    '120s',
    "How long a decommissioning worker lets its executors and drivers run on (their drivers stop each executor once its running tasks end) before it kills what is left and exits. Spark's spark.executor.decommission.forceKillTimeout is the driver's, per executor; this is the worker's bound on the whole, so that a worker leaves even if a driver never stops its executors.",
  ),
};
