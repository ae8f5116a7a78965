import { Type } from '@sinclair/typebox';
import { Host, Int32, MAX_ADDRESS_LENGTH, MAX_MESSAGE_LENGTH, Message } from './bounds.js';
import {
  AppFailure,
  AppId,
  ApplicationDescription,
  Cores,
  EndpointRefData,
  ExecId,
  ExecutorStateSchema,
  MemoryMB,
  WorkerId,
} from './common.js';
import { WickListenerEvent } from './listener.js';
import { boundary, defineMessage } from './registry.js';
import { MAX_REPORT_COALESCED, MAX_REPORT_EVENTS, TaskEndsCoalesced } from './statusReport.js';

/** An application's client (in its driver) and the Master (Spark's StandaloneAppClient). */

// Application → Master

const a2m = boundary('Application → Master', 'driver', 'master');

export const RegisterApplication = defineMessage(
  a2m,
  'RegisterApplication',
  'A driver registers its application and the endpoint that receives its executors.',
  { appDescription: ApplicationDescription, driver: EndpointRefData },
);

export const UnregisterApplication = defineMessage(
  a2m,
  'UnregisterApplication',
  'The application is done: free its executors. With `failure` it ends FAILED (its driver threw, or a job was aborted), else FINISHED; with `killed` as well, KILLED (the driver was stopped by a signal: `failure.message` says which, and is logged, not kept as a failure). Heard only over the connection its driver registered on.',
  {
    appId: AppId,
    failure: Type.Optional(AppFailure),
    killed: Type.Optional(Type.Literal(true)),
  },
);

export const RequestExecutors = defineMessage(
  a2m,
  'RequestExecutors',
  "The most executors the application wants in all (Spark's executor limit): the master launches no more beyond it. A driver that stops sends 0 first, so that an executor that ends meanwhile is not replaced.",
  { appId: AppId, requestedTotal: Type.Integer({ minimum: 0, maximum: 1_000_000 }) },
);

export const ExecutorRegistered = defineMessage(
  a2m,
  'ExecutorRegistered',
  "The driver accepted this executor's RegisterExecutor: it serves the application. It resets the application's count of executor failures in a row (wick.deploy.maxExecutorRetries), which an executor that only started (RUNNING) does not. The application is the one whose driver sends it, over its own connection.",
  { execId: ExecId },
);

export const MasterChangeAcknowledged = defineMessage(
  a2m,
  'MasterChangeAcknowledged',
  'The answer to MasterChanged from an application.',
  { appId: AppId },
);

export const ReportListenerEvents = defineMessage(
  a2m,
  'ReportListenerEvents',
  "A batch of the driver's listener events (its jobs, stages, tasks, executors and settings), for the master's /api/v1 and the per-application progress it pushes to its subscribers. Each task one by one up to REPORTED_TASKS_PER_SECOND a second, the others in `coalesced` (statusReport.ts). Heard only from the application's own driver, over the connection it registered on; a report past a bound (events a second, jobs, stage attempts or executors at once) is refused whole, naming the bound, and the application's state stays as it was. Past the bound of events a second the answer is `-32031` RateLimited with `data.retryAfterMs`, and the driver sends the same report again after that long (Wick's driver sends at most half the bound a second, so this is rare); past another bound it is `-32602`, and that report is dropped. One report in flight at a time: the driver sends the next once this one is answered.",
  {
    appId: AppId,
    events: Type.Array(WickListenerEvent, { maxItems: MAX_REPORT_EVENTS }),
    coalesced: Type.Optional(Type.Array(TaskEndsCoalesced, { maxItems: MAX_REPORT_COALESCED })),
  },
  { reply: () => ListenerEventsReported },
);

export const ListenerEventsReported = defineMessage(
  a2m,
  'ListenerEventsReported',
  'The answer to ReportListenerEvents: the report is applied.',
  {},
);

// Master → Application

const m2a = boundary('Master → Application', 'master', 'driver');

export const RegisteredApplication = defineMessage(
  m2a,
  'RegisteredApplication',
  'The application is registered under this id, with the key its executors will prove themselves with to its driver (none when the cluster runs open).',
  {
    appId: AppId,
    master: EndpointRefData,
    appKey: Type.Optional(
      Type.String({
        pattern: '^[0-9a-f]{64}$',
        maxLength: 64,
        description:
          'The app:<appId> key (docs/protocol.md, "Who may do what"): the driver accepts connections that prove it, which only its executors can.',
      }),
    ),
    eventLogByDefault: Type.Optional(
      Type.Boolean({
        description:
          "The cluster's default for wick.eventLog.enabled, for an application that did not set it: true on a local cluster (wick.deploy.eventLogByDefault).",
      }),
    ),
  },
);

export const ExecutorAdded = defineMessage(
  m2a,
  'ExecutorAdded',
  'An executor was granted on a worker.',
  {
    id: ExecId,
    workerId: WorkerId,
    hostPort: Type.String({ maxLength: MAX_ADDRESS_LENGTH }),
    cores: Cores,
    memory: MemoryMB,
  },
);

export const ExecutorUpdated = defineMessage(m2a, 'ExecutorUpdated', 'An executor changed state.', {
  id: ExecId,
  state: ExecutorStateSchema,
  message: Type.Optional(
    Type.String({
      maxLength: MAX_MESSAGE_LENGTH,
      description: 'How it ended; for one that failed by itself, the end of its stderr',
    }),
  ),
  exitStatus: Type.Optional(Int32()),
  workerLost: Type.Boolean(),
});

export const ExecutorDecommissioned = defineMessage(
  m2a,
  'ExecutorDecommissioned',
  "The executor's worker is decommissioning: place no more tasks there, let its running ones finish, then stop it (Spark's ExecutorUpdated with DECOMMISSIONED; a message of its own here, so that DECOMMISSIONED is not an executor state every view of executors must handle).",
  {
    id: ExecId,
    workerHost: Host,
    message: Message(),
  },
);

export const ApplicationRemoved = defineMessage(
  m2a,
  'ApplicationRemoved',
  'The master ended the application (killed, failed, or its executors kept failing).',
  { message: Message() },
);

export const WorkerRemoved = defineMessage(
  m2a,
  'WorkerRemoved',
  'A worker the application used was lost.',
  {
    id: WorkerId,
    host: Host,
    message: Message(),
  },
);
