import { Type } from '@sinclair/typebox';
import {
  Host,
  Int32,
  MAX_COUNTER,
  MAX_NAME_LENGTH,
  MAX_PATH_LENGTH,
  MAX_RETAINED,
  MAX_WORKER_CORES,
  Message,
  Url,
} from './bounds.js';
import {
  AppId,
  ClusterCores,
  Cores,
  DriverId,
  DriverStateSchema,
  EndpointRefData,
  ExecId,
  ExecutorStateSchema,
  MemoryMB,
  WorkerId,
} from './common.js';
import { boundary, defineMessage } from './registry.js';
import { ResourceAddresses, ResourceRequirements } from './resources.js';

/**
 * Clients ↔ a Worker: its state and the logs of its executors and drivers. The log messages are
 * also answered by the master's LogRelay endpoint, for any worker it knows (Spark's
 * spark.ui.reverseProxy, for RPC): a client that reaches only the master sends them there, and the
 * master relays them to the worker that holds the log over its own connection with that worker,
 * and the worker's pushes back. Hence their second receiver and sender, `master`.
 */

const c2w = boundary('Client ↔ Worker', 'client', 'worker');

export const RequestWorkerState = defineMessage(
  c2w,
  'RequestWorkerState',
  "Ask the worker's state.",
  {},
  { reply: () => WorkerStateResponse },
);

/** The longest command an executor's `app` quotes: Spark's worker /json shows it, not all of it. */
export const MAX_APP_COMMAND_QUOTE = 2048;

/** An executor's application as Spark's worker /json describes it (`appdesc`). */
const RunnerApp = Type.Object(
  {
    name: Type.String({ maxLength: MAX_NAME_LENGTH }),
    user: Type.String({ maxLength: MAX_NAME_LENGTH }),
    maxCores: Type.Optional(ClusterCores),
    memoryPerExecutorMB: MemoryMB,
    resourceReqsPerExecutor: Type.Optional(ResourceRequirements),
    command: Type.String({
      maxLength: MAX_APP_COMMAND_QUOTE,
      description: 'Its command line, each argument quoted, cut at the bound (no environment)',
    }),
  },
  { additionalProperties: false },
);

const RunnerInfo = Type.Object(
  {
    appId: Type.Optional(AppId),
    execId: Type.Optional(ExecId),
    driverId: Type.Optional(DriverId),
    cores: Cores,
    memory: MemoryMB,
    state: Type.Union([ExecutorStateSchema, DriverStateSchema]),
    pid: Type.Optional(Int32()),
    exitCode: Type.Optional(Int32()),
    message: Type.Optional(Message()),
    dir: Type.String({ maxLength: MAX_PATH_LENGTH }),
    /** An executor's application (Spark's ExecutorRunner.appDesc). */
    app: Type.Optional(RunnerApp),
    /** An executor's custom resources' addresses (Spark's ExecutorRunner.resources). */
    resources: Type.Optional(ResourceAddresses),
  },
  { additionalProperties: false },
);

export const WorkerStateResponse = defineMessage(
  c2w,
  'WorkerStateResponse',
  "The worker's state.",
  {
    host: Host,
    port: Type.Integer({ minimum: 0, maximum: 65535 }),
    workerId: WorkerId,
    masterUrl: Type.Optional(Url()),
    masterWebUiUrl: Type.Optional(Url()),
    cores: Cores,
    memory: MemoryMB,
    coresUsed: Cores,
    memoryUsed: MemoryMB,
    workDir: Type.String({ maxLength: MAX_PATH_LENGTH }),
    /** Its custom resources (wick.worker.resource.*) and those its executors hold. */
    resources: Type.Optional(ResourceAddresses),
    resourcesUsed: Type.Optional(ResourceAddresses),
    /** For operators and tests: follows end when their follower goes, so this goes back to 0. */
    logFollows: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
    // Each running one holds at least one core; finished ones: wick.worker.ui.retained*.
    executors: Type.Array(RunnerInfo, { maxItems: MAX_WORKER_CORES }),
    finishedExecutors: Type.Array(RunnerInfo, { maxItems: MAX_RETAINED }),
    drivers: Type.Array(RunnerInfo, { maxItems: MAX_WORKER_CORES }),
    finishedDrivers: Type.Array(RunnerInfo, { maxItems: MAX_RETAINED }),
  },
);

/** The most bytes one RequestLogRange may ask for, and one LogChunk carry. */
const MAX_LOG_RANGE = 16 * 1024 * 1024;
/** A log's bytes as base64: a third larger, padded. */
const LogData = Type.String({
  contentEncoding: 'base64',
  maxLength: Math.ceil(MAX_LOG_RANGE / 3) * 4,
});
/** An offset in a log, or its size. */
const LogBytes = Type.Integer({ minimum: 0, maximum: MAX_COUNTER });
const FollowId = Type.String({ minLength: 1, maxLength: 100 });

/** Which file: an executor's (appId + execId) or a driver's (driverId), stdout or stderr. */
const LogSource = {
  appId: Type.Optional(AppId),
  execId: Type.Optional(ExecId),
  driverId: Type.Optional(DriverId),
  stream: Type.Union([Type.Literal('stdout'), Type.Literal('stderr')]),
};

export const RequestLogRange = defineMessage(
  c2w,
  'RequestLogRange',
  'Read a byte range of a log; without offset, the last `length` bytes (default 100 KiB).',
  {
    ...LogSource,
    offset: Type.Optional(LogBytes),
    length: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_LOG_RANGE })),
  },
  { reply: () => LogRangeResponse, to: ['worker', 'master'] },
);

export const LogRangeResponse = defineMessage(c2w, 'LogRangeResponse', 'Bytes of a log, base64.', {
  data: LogData,
  offset: LogBytes,
  length: Type.Integer({ minimum: 0, maximum: MAX_LOG_RANGE }),
  totalSize: LogBytes,
});

export const FollowLog = defineMessage(
  c2w,
  'FollowLog',
  'Push the bytes of a log from offset on, as written, to follower (LogChunk), until StopFollowLog or the process has exited and the file is drained (LogFollowEnded). The reply is LogFollowStarted.',
  {
    ...LogSource,
    followId: FollowId,
    offset: LogBytes,
    follower: EndpointRefData,
  },
  { reply: () => LogFollowStarted, to: ['worker', 'master'] },
);

export const LogFollowStarted = defineMessage(c2w, 'LogFollowStarted', 'The answer to FollowLog.', {
  followId: FollowId,
  totalSize: LogBytes,
});

export const LogChunk = defineMessage(
  c2w,
  'LogChunk',
  'Pushed to a follower: bytes at offset, base64.',
  {
    followId: FollowId,
    offset: LogBytes,
    data: LogData,
  },
  { from: ['worker', 'master'], to: ['client', 'master'] },
);

export const LogFollowEnded = defineMessage(
  c2w,
  'LogFollowEnded',
  'Pushed to a follower: no more chunks.',
  {
    followId: FollowId,
    totalSize: LogBytes,
    reason: Message(),
  },
  { from: ['worker', 'master'], to: ['client', 'master'] },
);

export const StopFollowLog = defineMessage(
  c2w,
  'StopFollowLog',
  'Stop pushing chunks.',
  { followId: Type.String({ maxLength: 100 }) },
  { to: ['worker', 'master'] },
);
