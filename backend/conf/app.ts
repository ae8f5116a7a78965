import { parseMemoryMB } from './daemon.js';
import { parseDurationMs, parseInteger } from './parse.js';
import { conf, define } from './WickConf.js';

/** An application's settings (Spark's spark.executor.*, spark.cores.max, spark.task.*). */
export const AppConf = {
  master: conf.string(
    'wick.master',
    '',
    'The master URL an application registers with (or WICK_MASTER).',
  ),
  appName: conf.string('wick.app.name', '', "The application's name (or WICK_APP_NAME)."),
  executorMemory: define(
    'wick.executor.memory',
    '1g',
    "Memory per executor. A Wick executor shares it out between its task threads' heaps (one per core, at least 16m each): a task that needs more fails as out of memory, naming this setting.",
    parseMemoryMB,
  ),
  executorCores: define(
    'wick.executor.cores',
    '0',
    'Cores per executor; 0: one executor per worker with every core it can get (as Spark).',
    (raw) => parseInteger(raw, 0, 100_000),
  ),
  coresMax: define(
    'wick.cores.max',
    '0',
    'The most cores the application may use in all; 0: wick.deploy.defaultCores.',
    (raw) => parseInteger(raw, 0, 10_000_000),
  ),
  maxFailures: conf.int('wick.task.maxFailures', 4, 'Attempts of a task before its job fails.', 1),
  stageMaxConsecutiveAttempts: conf.int(
    'wick.stage.maxConsecutiveAttempts',
    4,
    'Consecutive attempts of a stage that end in a fetch failure before its job fails.',
    1,
  ),
  driverHost: conf.string(
    'wick.driver.host',
    '',
    'The address executors reach the driver at; empty: the local address of the route to the master (loopback only for a master on loopback).',
  ),
  driverBindAddress: conf.string(
    'wick.driver.bindAddress',
    '',
    "The address the driver listens on; empty: wick.driver.host's (set 0.0.0.0 behind NAT or a tunnel, where wick.driver.host is not this machine's).",
  ),
  driverPort: conf.int(
    'wick.driver.port',
    0,
    "The driver's RPC port (0: any free port).",
    0,
    65535,
  ),
  defaultParallelism: conf.int(
    'wick.default.parallelism',
    0,
    'Partitions when none are asked for; 0: the cores of the executors (at least 2).',
    0,
  ),
  files: conf.string(
    'wick.files',
    '',
    'Files to ship to every executor, comma-separated (wick submit --files); tasks find them with WickFiles.get(name).',
  ),
  showConsoleProgress: conf.bool(
    'wick.ui.showConsoleProgress',
    true,
    "Spark's console progress bar on the driver's stderr ([Stage 3:=====>   (120 + 4) / 400]) for stages that run longer than half a second, when stderr is a terminal; it never shows in a pipe or a file, and the program's own output is never cut by it.",
  ),
  retainedJobs: conf.int(
    'wick.ui.retainedJobs',
    1000,
    'Finished jobs the driver (wc.statusTracker()) and the master (/api/v1) remember of an application; the oldest go first. Running ones are always kept.',
    1,
  ),
  retainedStages: conf.int(
    'wick.ui.retainedStages',
    1000,
    'Finished stage attempts the driver (wc.statusTracker()) and the master (/api/v1) remember of an application; the oldest go first. Running ones are always kept.',
    1,
  ),
  retainedTasks: conf.int(
    'wick.ui.retainedTasks',
    100_000,
    "Tasks of one stage attempt kept by the master's /api/v1 and a history server (Spark's spark.ui.retainedTasks); the oldest finished go first. Counts stay exact.",
    1,
  ),
  retainedDeadExecutors: conf.int(
    'wick.ui.retainedDeadExecutors',
    100,
    "Executors that ended kept in an application's /api/v1 (Spark's spark.ui.retainedDeadExecutors).",
    0,
  ),
  reportStatus: conf.bool(
    'wick.ui.reportStatus',
    true,
    "The driver reports its jobs, stages, tasks and executors to its master (in batches: each task one by one up to 1,000 a second, the rest as counts), for the master's /api/v1 and the pages it pushes; off: the master knows only the application's executors.",
  ),
  eventLogEnabled: conf.bool(
    'wick.eventLog.enabled',
    false,
    "Write the application's events (its jobs, stages, tasks and executors, as its listener bus carries them) to a JSON-lines log in wick.eventLog.dir, one event a line, named by the application's id (….inprogress while it runs). A crash leaves a readable prefix. Unset: off, as Spark, except on a local cluster (wick local-cluster, --master local, the VS Code extension's), whose master turns it on (wick.deploy.eventLogByDefault); `wick history` lists what was logged.",
  ),
  eventLogDir: conf.string(
    'wick.eventLog.dir',
    '',
    'Where event logs are written; empty: $XDG_STATE_HOME/wick/event-logs (~/.local/state/wick/event-logs).',
  ),
  eventLogCompress: conf.bool(
    'wick.eventLog.compress',
    false,
    'gzip event logs (….gz), each write flushed to a whole block so that a crash leaves a readable prefix.',
  ),
  eventLogRolling: conf.bool(
    'wick.eventLog.rolling.enabled',
    false,
    "Write an application's event log as a folder of parts (eventlog_v2_<appId>/events_<n>_<appId>), a new part past wick.eventLog.rolling.maxFileSize, as Spark's rolling event logs.",
  ),
  eventLogRollingMaxFileSize: conf.sizeBytes(
    'wick.eventLog.rolling.maxFileSize',
    '128m',
    'The size of a rolled event log part (wick.eventLog.rolling.enabled).',
  ),
  registrationTimeout: define(
    'wick.app.registrationTimeout',
    '20s',
    'How long an application waits for a master to accept it.',
    (raw) => parseDurationMs(raw),
  ),
};
