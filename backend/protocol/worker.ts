import { Type } from '@sinclair/typebox';
import {
  AppId,
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

const RunnerInfo = Type.Object(
  {
    appId: Type.Optional(AppId),
    execId: Type.Optional(ExecId),
    driverId: Type.Optional(DriverId),
    cores: Cores,
    memory: MemoryMB,
    state: Type.Union([ExecutorStateSchema, DriverStateSchema]),
    pid: Type.Optional(Type.Integer()),
    exitCode: Type.Optional(Type.Integer()),
    message: Type.Optional(Type.String()),
    dir: Type.String(),
  },
  { additionalProperties: false },
);

export const WorkerStateResponse = defineMessage(
  c2w,
  'WorkerStateResponse',
  "The worker's state.",
  {
    host: Type.String(),
    port: Type.Integer(),
    workerId: WorkerId,
    masterUrl: Type.Optional(Type.String()),
    masterWebUiUrl: Type.Optional(Type.String()),
    cores: Cores,
    memory: MemoryMB,
    coresUsed: Cores,
    memoryUsed: MemoryMB,
    workDir: Type.String(),
    /** For operators and tests: follows end when their follower goes, so this goes back to 0. */
    logFollows: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
    executors: Type.Array(RunnerInfo),
    finishedExecutors: Type.Array(RunnerInfo),
    drivers: Type.Array(RunnerInfo),
    finishedDrivers: Type.Array(RunnerInfo),
  },
);

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
    offset: Type.Optional(Type.Integer({ minimum: 0 })),
    length: Type.Optional(Type.Integer({ minimum: 0, maximum: 16 * 1024 * 1024 })),
  },
  { reply: () => LogRangeResponse, to: ['worker', 'master'] },
);

export const LogRangeResponse = defineMessage(c2w, 'LogRangeResponse', 'Bytes of a log, base64.', {
  data: Type.String({ contentEncoding: 'base64' }),
  offset: Type.Integer({ minimum: 0 }),
  length: Type.Integer({ minimum: 0 }),
  totalSize: Type.Integer({ minimum: 0 }),
});

export const FollowLog = defineMessage(
  c2w,
  'FollowLog',
  'Push the bytes of a log from offset on, as written, to follower (LogChunk), until StopFollowLog or the process has exited and the file is drained (LogFollowEnded). The reply is LogFollowStarted.',
  {
    ...LogSource,
    followId: Type.String({ minLength: 1, maxLength: 100 }),
    offset: Type.Integer({ minimum: 0 }),
    follower: EndpointRefData,
  },
  { reply: () => LogFollowStarted, to: ['worker', 'master'] },
);

export const LogFollowStarted = defineMessage(c2w, 'LogFollowStarted', 'The answer to FollowLog.', {
  followId: Type.String(),
  totalSize: Type.Integer({ minimum: 0 }),
});

export const LogChunk = defineMessage(
  c2w,
  'LogChunk',
  'Pushed to a follower: bytes at offset, base64.',
  {
    followId: Type.String(),
    offset: Type.Integer({ minimum: 0 }),
    data: Type.String({ contentEncoding: 'base64' }),
  },
  { from: ['worker', 'master'], to: ['client', 'master'] },
);

export const LogFollowEnded = defineMessage(
  c2w,
  'LogFollowEnded',
  'Pushed to a follower: no more chunks.',
  {
    followId: Type.String(),
    totalSize: Type.Integer({ minimum: 0 }),
    reason: Type.String(),
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
