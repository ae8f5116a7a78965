import { DeployConf } from './deploy.js';
import { parseDurationMs } from './parse.js';
import { conf, define as defineEntry } from './WickConf.js';

/** MAX_RETAINED of backend/protocol/bounds.ts (conf imports nothing above util). */
const RETAINED_MAX = 100_000;

/** The Master's settings (Spark's spark.deploy.* and spark.worker.timeout, as wick.*). */
export const MasterConf = {
  /** Declared in backend/conf/deploy.ts, which the worker reads too. */
  workerTimeout: DeployConf.workerTimeout,
  deadWorkerPersistence: conf.int(
    'wick.dead.worker.persistence',
    15,
    'DEAD workers stay listed for this many worker timeouts.',
    0,
  ),
  maxExecutorRetries: conf.int(
    'wick.deploy.maxExecutorRetries',
    10,
    'Executor failures in a row, on any of its workers, after which an application with no executor registered with its driver FAILS (-1: never); an executor that ends before it registers is a failure, and one that registers resets the count.',
    -1,
  ),
  retainedApplications: conf.int(
    'wick.deploy.retainedApplications',
    200,
    'Completed applications kept.',
    1,
    RETAINED_MAX,
  ),
  retainedDrivers: conf.int(
    'wick.deploy.retainedDrivers',
    200,
    'Completed drivers kept.',
    1,
    RETAINED_MAX,
  ),
  eventLogByDefault: conf.bool(
    'wick.deploy.eventLogByDefault',
    false,
    "Tell the applications that register here to write an event log when they do not set wick.eventLog.enabled themselves (each into its own wick.eventLog.dir). A local cluster's master has it on (wick local-cluster, --master local, the VS Code extension's): its runs can be found again with wick history; a shared cluster leaves it to each application, as Spark does.",
  ),
  spreadOut: conf.bool(
    'wick.deploy.spreadOut',
    true,
    "Spread an application's executors over many workers (true) or fill one worker first (false).",
  ),
  defaultCores: conf.int(
    'wick.deploy.defaultCores',
    2147483647,
    'Cores for an application that does not set wick.cores.max.',
    1,
  ),
  recoveryMode: defineEntry(
    'wick.deploy.recoveryMode',
    'NONE',
    'NONE; FILESYSTEM to survive a master restart; ZOOKEEPER for standby masters that take over when the leader dies.',
    (raw) => {
      const v = raw.trim().toUpperCase();
      if (v !== 'NONE' && v !== 'FILESYSTEM' && v !== 'ZOOKEEPER') {
        throw new Error(`expected NONE, FILESYSTEM or ZOOKEEPER, got "${raw}"`);
      }
      return v as 'NONE' | 'FILESYSTEM' | 'ZOOKEEPER';
    },
  ),
  recoveryDirectory: conf.string(
    'wick.deploy.recoveryDirectory',
    '',
    'Where FILESYSTEM recovery keeps the master state.',
  ),
  zookeeperUrl: conf.string(
    'wick.deploy.zookeeper.url',
    '',
    'ZOOKEEPER recovery: the ensemble, host:port[,host:port...].',
  ),
  zookeeperDir: conf.string(
    'wick.deploy.zookeeper.dir',
    '/wick',
    'ZOOKEEPER recovery: the znode under which masters keep their state and elect a leader.',
  ),
  zookeeperSessionTimeout: defineEntry(
    'wick.deploy.zookeeper.sessionTimeout',
    '10s',
    "ZOOKEEPER recovery: the masters' session timeout; a dead leader is replaced about this long after it dies (the server may clamp it to 2–20 of its ticks).",
    (raw) => parseDurationMs(raw, 's'),
  ),
  filesDir: conf.string(
    'wick.master.filesDir',
    '',
    'Where the master keeps the files of cluster-mode applications (their code, --files), by content; default: wick.deploy.recoveryDirectory/files with FILESYSTEM recovery, else ~/.cache/wick/master-files/<port>.',
  ),
  uploadMaxSize: conf.sizeBytes(
    'wick.master.upload.maxSize',
    '1g',
    'The most bytes of files one cluster-mode submission may leave with the master (and the largest file).',
  ),
  uploadMaxTotalSize: conf.sizeBytes(
    'wick.master.upload.maxTotalSize',
    '8g',
    "The most bytes of uploaded files a master keeps in all (every submission's, and uploads under way): past it, a submission is refused, naming this setting, until drivers that need kept files end (their files are then removed).",
  ),
  subscriberMaxBacklog: conf.sizeBytes(
    'wick.master.subscriber.maxBacklog',
    '16m',
    "Bytes of state pushes that may wait unsent for one subscriber (the agent, a web UI, `wick submit`); past it the subscriber is dropped: a client's connection is closed, a worker's or driver's keeps only its own messages. 16m is four pages of the state: a reading subscriber is never that far behind, one that stops reading costs the master no more.",
  ),
  uiKillEnabled: conf.bool(
    'wick.ui.killEnabled',
    true,
    'Whether the web UI may kill applications and drivers.',
  ),
};
