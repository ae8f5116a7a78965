import { type Static, Type } from '@sinclair/typebox';
import {
  Counter,
  EpochMs,
  Host,
  Int32,
  MAX_ACTIVE_APPS,
  MAX_ACTIVE_DRIVERS,
  MAX_ADDRESS_LENGTH,
  MAX_APP_EXECUTORS,
  MAX_COUNTER,
  MAX_EXECUTOR_HISTORY,
  MAX_MASTERS,
  MAX_MESSAGE_LENGTH,
  MAX_NAME_LENGTH,
  MAX_PATH_LENGTH,
  MAX_REMOVED_EXECUTORS,
  MAX_RETAINED,
  MAX_STATE_PAGE_ENTRIES,
  MAX_WORKER_CORES,
  MAX_WORKERS,
  Message,
  Url,
} from './bounds.js';
import {
  AppFailure,
  AppId,
  ApplicationStateSchema,
  ClusterCores,
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
import { ResourceAddresses, ResourceRequirements } from './resources.js';

/**
 * The Master's state as clients see it: one snapshot on request, then every change pushed to
 * subscribers, so that no UI ever polls. `wick status --json` and the web UI's /json map this to
 * the field names of Spark's master /json.
 */

export const ExecutorStateEntry = Type.Object(
  {
    state: ExecutorStateSchema,
    time: EpochMs,
    message: Type.Optional(Message()),
    exitStatus: Type.Optional(Int32()),
  },
  { additionalProperties: false },
);

export const ExecutorSummary = Type.Object(
  {
    appId: AppId,
    id: ExecId,
    workerId: WorkerId,
    workerHostPort: Type.String({ maxLength: MAX_ADDRESS_LENGTH }),
    cores: Cores,
    memory: MemoryMB,
    state: ExecutorStateSchema,
    exitStatus: Type.Optional(Int32()),
    message: Type.Optional(Message()),
    history: Type.Array(ExecutorStateEntry, {
      maxItems: MAX_EXECUTOR_HISTORY,
      description: 'Its states, oldest first (the most recent ones)',
    }),
    resources: Type.Optional(ResourceAddresses),
  },
  { additionalProperties: false },
);
export type ExecutorSummary = Static<typeof ExecutorSummary>;

export const WorkerSummary = Type.Object(
  {
    id: WorkerId,
    host: Host,
    port: Type.Integer({ minimum: 0, maximum: 65535 }),
    webUiAddress: Url(),
    cores: Cores,
    coresUsed: Cores,
    memory: MemoryMB,
    memoryUsed: MemoryMB,
    state: WorkerStateSchema,
    lastHeartbeat: EpochMs,
    // Each executor and driver holds at least one of the worker's cores.
    executors: Type.Array(
      Type.Object({ appId: AppId, execId: ExecId }, { additionalProperties: false }),
      { maxItems: MAX_WORKER_CORES },
    ),
    driverIds: Type.Array(DriverId, { maxItems: MAX_WORKER_CORES }),
    /** Its custom resources (wick.worker.resource.*), and those its executors hold. */
    resources: Type.Optional(ResourceAddresses),
    resourcesUsed: Type.Optional(ResourceAddresses),
  },
  { additionalProperties: false },
);
export type WorkerSummary = Static<typeof WorkerSummary>;

/** Running jobs and stages an application's progress lists (the counts cover them all). */
export const MAX_PROGRESS_ENTRIES = 20;

const ProgressCounts = Type.Object(
  {
    numTasks: Counter(),
    numActiveTasks: Counter(),
    numCompletedTasks: Counter(),
    numFailedTasks: Counter(),
    numKilledTasks: Counter(),
  },
  { additionalProperties: false },
);

/**
 * An application's jobs and stages in brief, from its driver's reports (ReportListenerEvents):
 * what the master pushes to its subscribers, at most once per report, in place of every task's
 * event. The whole story is in the master's /api/v1.
 */
export const AppProgress = Type.Object(
  {
    jobs: Type.Object(
      { active: Counter(), succeeded: Counter(), failed: Counter() },
      { additionalProperties: false, description: 'Jobs kept (wick.ui.retainedJobs), by status' },
    ),
    stages: Type.Object(
      { active: Counter(), complete: Counter(), failed: Counter() },
      { additionalProperties: false, description: 'Stage attempts kept, by status' },
    ),
    activeJobs: Type.Array(
      Type.Object(
        {
          jobId: Counter(),
          submissionTime: EpochMs,
          stageIds: Type.Array(Counter(), { maxItems: MAX_PROGRESS_ENTRIES }),
          counts: ProgressCounts,
        },
        { additionalProperties: false },
      ),
      { maxItems: MAX_PROGRESS_ENTRIES, description: 'The running jobs, the oldest first' },
    ),
    activeStages: Type.Array(
      Type.Object(
        {
          stageId: Counter(),
          attemptId: Counter(),
          name: Type.String({ maxLength: 200 }),
          submissionTime: EpochMs,
          counts: ProgressCounts,
        },
        { additionalProperties: false },
      ),
      {
        maxItems: MAX_PROGRESS_ENTRIES,
        description: 'The running stage attempts, the oldest first',
      },
    ),
    lastUpdated: EpochMs,
  },
  { additionalProperties: false },
);
export type AppProgress = Static<typeof AppProgress>;

export const AppSummary = Type.Object(
  {
    id: AppId,
    name: Type.String({ maxLength: MAX_NAME_LENGTH }),
    user: Type.String({ maxLength: MAX_NAME_LENGTH }),
    maxCores: Type.Optional(ClusterCores),
    coresGranted: ClusterCores,
    coresPerExecutor: Type.Optional(Cores),
    memoryPerExecutorMB: MemoryMB,
    resourceReqsPerExecutor: Type.Optional(ResourceRequirements),
    state: ApplicationStateSchema,
    startTime: EpochMs,
    endTime: Type.Optional(EpochMs),
    /** Why a WAITING application has no executors yet, in words. */
    waitingReason: Type.Optional(Message()),
    driver: EndpointRefData,
    executors: Type.Array(ExecutorSummary, { maxItems: MAX_APP_EXECUTORS }),
    removedExecutors: Type.Array(ExecutorSummary, {
      maxItems: MAX_REMOVED_EXECUTORS,
      description: 'Its executors that ended (the most recent ones)',
    }),
    /**
     * The last executor that failed by itself, with the end of its stderr (and a hint when it
     * could not connect): kept once per application, not per executor, so that an application
     * whose executors keep failing does not carry kilobytes per relaunch in every state push.
     */
    /** Why it FAILED, when its driver said (or its connection dropped without unregistering). */
    failure: Type.Optional(AppFailure),
    /** Its jobs and stages in brief, once its driver reported them. */
    progress: Type.Optional(AppProgress),
    /**
     * The cluster-mode driver that runs it: known from the key its driver's connection proved
     * (a worker derives `submission:<driver id>` for each driver it launches, credentials.ts),
     * never from what the driver said. `wick submit --wait` finds its application's progress by it.
     */
    driverId: Type.Optional(DriverId),
    lastExecutorFailure: Type.Optional(
      Type.Object(
        {
          execId: ExecId,
          workerHostPort: Type.String({ maxLength: MAX_ADDRESS_LENGTH }),
          time: EpochMs,
          message: Type.String({ maxLength: MAX_MESSAGE_LENGTH }),
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
    appPath: Type.String({ maxLength: MAX_PATH_LENGTH }),
    cores: Cores,
    mem: MemoryMB,
    supervise: Type.Boolean(),
    submitDate: EpochMs,
    workerId: Type.Optional(WorkerId),
    workerHostPort: Type.Optional(Type.String({ maxLength: MAX_ADDRESS_LENGTH })),
    exception: Type.Optional(Message()),
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
    url: Url('wick://host:port'),
    status: RecoveryStateSchema,
  },
  { additionalProperties: false },
);
export type MasterEntry = Static<typeof MasterEntry>;

/**
 * Every master taking part in the ZooKeeper election, the leader first, from the URLs the masters
 * write into their election znodes. Absent with a single master (and from older masters).
 */
const masters = Type.Optional(Type.Array(MasterEntry, { maxItems: MAX_MASTERS }));

/**
 * The tables a page of the state goes through, in order, by their letter in a cursor: w workers,
 * a active and c completed applications, d active and e completed drivers; each names the field
 * of MasterStateResponse that lists it. The master pages through them, a client compares cursors
 * by them: both import them from here.
 */
export const STATE_TABLES = {
  w: 'workers',
  a: 'activeApps',
  c: 'completedApps',
  d: 'activeDrivers',
  e: 'completedDrivers',
} as const;
export type StateTable = keyof typeof STATE_TABLES;
/** The letters of STATE_TABLES in the order a page goes through them. */
export const STATE_TABLE_ORDER = Object.keys(STATE_TABLES) as StateTable[];

/** A StateCursor read: the table and the rank of the last entry a page listed there. */
export interface StatePosition {
  table: StateTable;
  rank: number;
}

/** `w:12`, as a page's `next` carries it. */
export function formatStateCursor(p: StatePosition): string {
  return `${p.table}:${p.rank}`;
}

/** A cursor read back; undefined if it is not one (the schema's pattern checks its form). */
export function parseStateCursor(text: string): StatePosition | undefined {
  const [table = '', rank = ''] = text.split(':');
  if (!Object.hasOwn(STATE_TABLES, table) || !/^[0-9]{1,16}$/.test(rank)) return undefined;
  return { table: table as StateTable, rank: Number(rank) };
}

/** Whether cursor `a` (`w:12`) comes after `b` in the master's order of tables and ranks. */
export function stateCursorAfter(a: string, b: string): boolean {
  const pa = parseStateCursor(a);
  const pb = parseStateCursor(b);
  if (!pa || !pb) return false;
  const ia = STATE_TABLE_ORDER.indexOf(pa.table);
  const ib = STATE_TABLE_ORDER.indexOf(pb.table);
  return ia > ib || (ia === ib && pa.rank > pb.rank);
}

/**
 * Where a page of the state ends: the table (STATE_TABLES) and the position of its last entry
 * in it. Opaque to clients.
 */
export const StateCursor = Type.String({
  pattern: `^[${STATE_TABLE_ORDER.join('')}]:[0-9]{1,16}$`,
  maxLength: 18,
  description: "Where the next page starts (from the previous page's `next`)",
});

/** Asks for the state in pages of at most this many entries (and about 4 MiB). */
const limit = Type.Optional(
  Type.Integer({
    minimum: 1,
    maximum: MAX_STATE_PAGE_ENTRIES,
    description:
      'Answer one page of at most this many entries (it may hold fewer: a page stops at about 4 MiB), with `next` when more follow; without it, the whole state in one reply',
  }),
);

const stateFields = {
  url: Url('wick://host:port'),
  webUiUrl: Url(),
  status: RecoveryStateSchema,
  workers: Type.Array(WorkerSummary, { maxItems: MAX_WORKERS }),
  activeApps: Type.Array(AppSummary, { maxItems: MAX_ACTIVE_APPS }),
  completedApps: Type.Array(AppSummary, { maxItems: MAX_RETAINED }),
  activeDrivers: Type.Array(DriverSummary, { maxItems: MAX_ACTIVE_DRIVERS }),
  completedDrivers: Type.Array(DriverSummary, { maxItems: MAX_RETAINED }),
  masters,
};

const ui = boundary('Client ↔ Master (state)', ['client', 'driver'], 'master');

export const RequestMasterState = defineMessage(
  ui,
  'RequestMasterState',
  "Ask the master's whole state, or (with `limit`) one page of it: the first, or the one after `after`. A client that pages asks for the next page until a page has no `next`; each page lists the entries as they are when it is answered.",
  {
    limit,
    after: Type.Optional(StateCursor),
  },
  { reply: () => MasterStateResponse },
);

export const MasterStateResponse = defineMessage(
  ui,
  'MasterStateResponse',
  "The master's whole state, or one page of it: the header fields whole, the lists in part.",
  {
    ...stateFields,
    seq: Type.Integer({
      minimum: 0,
      maximum: MAX_COUNTER,
      description: 'The number of the last change included',
    }),
    next: Type.Optional(StateCursor),
  },
);

export const SubscribeMasterState = defineMessage(
  ui,
  'SubscribeMasterState',
  'Ask for the state now (the reply, a MasterStateResponse: with `limit`, its first page) and every change after it (MasterStateEvent to the subscriber). A subscriber whose unread pushes pass wick.master.subscriber.maxBacklog is dropped: a client-mode one is disconnected, another is sent MasterStateSubscriptionDropped.',
  { subscriber: EndpointRefData, limit },
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
  'Pushed to subscribers: what changed since the previous event, as whole entries to replace by id. A change too large for one event (about 4 MiB) comes as several, numbered one after another.',
  {
    seq: Type.Integer({ minimum: 1, maximum: MAX_COUNTER }),
    status: Type.Optional(RecoveryStateSchema),
    /** The whole list again, whenever it or a state in it changes. */
    masters,
    workers: Type.Optional(Type.Array(WorkerSummary, { maxItems: MAX_WORKERS })),
    apps: Type.Optional(Type.Array(AppSummary, { maxItems: MAX_ACTIVE_APPS + MAX_RETAINED })),
    drivers: Type.Optional(
      Type.Array(DriverSummary, { maxItems: MAX_ACTIVE_DRIVERS + MAX_RETAINED }),
    ),
    removedWorkers: Type.Optional(Type.Array(WorkerId, { maxItems: MAX_WORKERS })),
    removedApps: Type.Optional(Type.Array(AppId, { maxItems: MAX_ACTIVE_APPS + MAX_RETAINED })),
    removedDrivers: Type.Optional(
      Type.Array(DriverId, { maxItems: MAX_ACTIVE_DRIVERS + MAX_RETAINED }),
    ),
  },
  { from: 'master', to: ['client'] },
);

export const MasterStateSubscriptionDropped = defineMessage(
  ui,
  'MasterStateSubscriptionDropped',
  'Pushed to a subscriber the master dropped because it fell behind (its unread pushes passed wick.master.subscriber.maxBacklog): no more MasterStateEvents come; subscribe again for a fresh state.',
  { reason: Message() },
  { from: 'master', to: ['client'] },
);
