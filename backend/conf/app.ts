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
  registrationTimeout: define(
    'wick.app.registrationTimeout',
    '20s',
    'How long an application waits for a master to accept it.',
    (raw) => parseDurationMs(raw),
  ),
};
