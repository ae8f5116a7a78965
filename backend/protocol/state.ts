import { type Static, Type } from '@sinclair/typebox';
import {
  AppId,
  ApplicationStateSchema,
  Cores,
  DriverId,
  DriverStateSchema,
  EndpointRefData,
  ExecId,
  ExecutorStateSchema,
  MemoryMB,
  RecoveryStateSchema,
  WorkerId,
  WorkerStateSchema,
} from './common.js';
import { boundary, defineMessage } from './registry.js';

/**
 * The Master's state as clients see it: one snapshot on request, then every change pushed to
 * subscribers, so that no UI ever polls. `wick status --json` and the web UI's /json map this to
 * the field names of Spark's master /json.
 */

export const ExecutorStateEntry = Type.Object(
  {
    state: ExecutorStateSchema,
    time: Type.Integer({ description: 'ms since the epoch' }),
    message: Type.Optional(Type.String()),
    exitStatus: Type.Optional(Type.Integer()),
  },
  { additionalProperties: false },
);

export const ExecutorSummary = Type.Object(
  {
    appId: AppId,
    id: ExecId,
    workerId: WorkerId,
    workerHostPort: Type.String(),
    cores: Cores,
    memory: MemoryMB,
    state: ExecutorStateSchema,
    exitStatus: Type.Optional(Type.Integer()),
    message: Type.Optional(Type.String()),
    history: Type.Array(ExecutorStateEntry),
  },
  { additionalProperties: false },
);
export type ExecutorSummary = Static<typeof ExecutorSummary>;

export const WorkerSummary = Type.Object(
  {
    id: WorkerId,
    host: Type.String(),
    port: Type.Integer(),
    webUiAddress: Type.String(),
    cores: Cores,
    coresUsed: Cores,
    memory: MemoryMB,
    memoryUsed: MemoryMB,
    state: WorkerStateSchema,
    lastHeartbeat: Type.Integer({ description: 'ms since the epoch' }),
    executors: Type.Array(
      Type.Object({ appId: AppId, execId: ExecId }, { additionalProperties: false }),
    ),
    driverIds: Type.Array(DriverId),
  },
  { additionalProperties: false },
);
export type WorkerSummary = Static<typeof WorkerSummary>;

export const AppSummary = Type.Object(
  {
    id: AppId,
    name: Type.String(),
    user: Type.String(),
    maxCores: Type.Optional(Type.Integer()),
    coresGranted: Cores,
    coresPerExecutor: Type.Optional(Type.Integer()),
    memoryPerExecutorMB: MemoryMB,
    state: ApplicationStateSchema,
    startTime: Type.Integer(),
    endTime: Type.Optional(Type.Integer()),
    /** Why a WAITING application has no executors yet, in words. */
    waitingReason: Type.Optional(Type.String()),
    driver: EndpointRefData,
    executors: Type.Array(ExecutorSummary),
    removedExecutors: Type.Array(ExecutorSummary),
    /**
     * The last executor that failed by itself, with the end of its stderr (and a hint when it
     * could not connect): kept once per application, not per executor, so that an application
     * whose executors keep failing does not carry kilobytes per relaunch in every state push.
     */
    lastExecutorFailure: Type.Optional(
      Type.Object(
        {
          execId: ExecId,
          workerHostPort: Type.String({ maxLength: 300 }),
          time: Type.Integer({ description: 'ms since the epoch' }),
          message: Type.String({ maxLength: 8192 }),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export type AppSummary = Static<typeof AppSummary>;

export const DriverSummary = Type.Object(
  {
    id: DriverId,
    state: DriverStateSchema,
    appPath: Type.String(),
    cores: Cores,
    mem: MemoryMB,
    supervise: Type.Boolean(),
    submitDate: Type.Integer(),
    workerId: Type.Optional(WorkerId),
    workerHostPort: Type.Optional(Type.String()),
    exception: Type.Optional(Type.String()),
    relaunchedFrom: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description:
          'The driver this one replaces: a supervised driver whose worker was lost runs again under a new id (SPARK-19900)',
      }),
    ),
  },
  { additionalProperties: false },
);
export type DriverSummary = Static<typeof DriverSummary>;

/** One master of a cluster with standby masters (recovery mode ZOOKEEPER), as its peers see it. */
export const MasterEntry = Type.Object(
  {
    url: Type.String({ description: 'wick://host:port' }),
    status: RecoveryStateSchema,
  },
  { additionalProperties: false },
);
export type MasterEntry = Static<typeof MasterEntry>;

/**
 * Every master taking part in the ZooKeeper election, the leader first, from the URLs the masters
 * write into their election znodes. Absent with a single master (and from older masters).
 */
const masters = Type.Optional(Type.Array(MasterEntry));

const stateFields = {
  url: Type.String({ description: 'wick://host:port' }),
  webUiUrl: Type.String(),
  status: RecoveryStateSchema,
  workers: Type.Array(WorkerSummary),
  activeApps: Type.Array(AppSummary),
  completedApps: Type.Array(AppSummary),
  activeDrivers: Type.Array(DriverSummary),
  completedDrivers: Type.Array(DriverSummary),
  masters,
};

const ui = boundary('Client ↔ Master (state)', ['client', 'driver'], 'master');

export const RequestMasterState = defineMessage(
  ui,
  'RequestMasterState',
  "Ask the master's whole state.",
  {},
  { reply: () => MasterStateResponse },
);

export const MasterStateResponse = defineMessage(
  ui,
  'MasterStateResponse',
  "The master's whole state.",
  {
    ...stateFields,
    seq: Type.Integer({ minimum: 0, description: 'The number of the last change included' }),
  },
);

export const SubscribeMasterState = defineMessage(
  ui,
  'SubscribeMasterState',
  'Ask for the state now (the reply, a MasterStateResponse) and every change after it (MasterStateEvent to the subscriber).',
  { subscriber: EndpointRefData },
  { reply: () => MasterStateResponse },
);

export const UnsubscribeMasterState = defineMessage(
  ui,
  'UnsubscribeMasterState',
  'Stop the pushes.',
  {
    subscriber: EndpointRefData,
  },
);

export const MasterStateEvent = defineMessage(
  ui,
  'MasterStateEvent',
  'Pushed to subscribers: what changed since the previous event, as whole entries to replace by id.',
  {
    seq: Type.Integer({ minimum: 1 }),
    status: Type.Optional(RecoveryStateSchema),
    /** The whole list again, whenever it or a state in it changes. */
    masters,
    workers: Type.Optional(Type.Array(WorkerSummary)),
    apps: Type.Optional(Type.Array(AppSummary)),
    drivers: Type.Optional(Type.Array(DriverSummary)),
    removedWorkers: Type.Optional(Type.Array(WorkerId)),
    removedApps: Type.Optional(Type.Array(AppId)),
    removedDrivers: Type.Optional(Type.Array(DriverId)),
  },
  { from: 'master', to: ['client'] },
);
