import { Type } from '@sinclair/typebox';
import { Host, Int32, MAX_ADDRESS_LENGTH, MAX_WORKER_CORES, Message, Url } from './bounds.js';
import {
  AppId,
  ApplicationDescription,
  Cores,
  DriverDescription,
  DriverId,
  DriverStateSchema,
  EndpointRefData,
  ExecId,
  ExecutorDescription,
  ExecutorStateSchema,
  MemoryMB,
  WorkerCores,
  WorkerId,
  WorkerMemoryMB,
} from './common.js';
import { boundary, defineMessage } from './registry.js';
import { ResourceAddresses } from './resources.js';

/**
 * The standalone deploy protocol between Workers and the Master (Spark's DeployMessages). Each
 * group is one direction of one boundary.
 */

// Worker → Master

const w2m = boundary('Worker → Master', 'worker', 'master');

export const RegisterWorker = defineMessage(
  w2m,
  'RegisterWorker',
  'A worker offers its cores and memory.',
  {
    id: WorkerId,
    host: Host,
    port: Type.Integer({ minimum: 1, maximum: 65535 }),
    worker: EndpointRefData,
    cores: WorkerCores,
    memory: WorkerMemoryMB,
    workerWebUiUrl: Url(),
    masterAddress: Type.String({
      maxLength: MAX_ADDRESS_LENGTH,
      description: 'The master address the worker dialled (host:port)',
    }),
    resources: Type.Optional(ResourceAddresses),
  },
);

export const Heartbeat = defineMessage(w2m, 'Heartbeat', 'A registered worker is alive.', {
  workerId: WorkerId,
  worker: EndpointRefData,
});

export const ExecutorStateChanged = defineMessage(
  w2m,
  'ExecutorStateChanged',
  'An executor on the worker changed state; a finished one frees its resources.',
  {
    appId: AppId,
    execId: ExecId,
    state: ExecutorStateSchema,
    message: Type.Optional(
      Type.String({
        maxLength: 8192,
        description: 'How it ended; for one that failed by itself, the end of its stderr',
      }),
    ),
    exitStatus: Type.Optional(Int32()),
  },
);

export const DriverStateChanged = defineMessage(
  w2m,
  'DriverStateChanged',
  'A driver on the worker changed state.',
  {
    driverId: DriverId,
    state: DriverStateSchema,
    exception: Type.Optional(Message()),
  },
);

export const WorkerLatestState = defineMessage(
  w2m,
  'WorkerLatestState',
  'What the worker runs, after registering; the master kills what it does not know.',
  {
    id: WorkerId,
    // Each holds at least one of the worker's cores.
    executors: Type.Array(ExecutorDescription, { maxItems: MAX_WORKER_CORES }),
    driverIds: Type.Array(DriverId, { maxItems: MAX_WORKER_CORES }),
  },
);

export const WorkerSchedulerStateResponse = defineMessage(
  w2m,
  'WorkerSchedulerStateResponse',
  'The answer to MasterChanged: what the worker runs, so a recovering master can take it back.',
  {
    id: WorkerId,
    // Each holds at least one of the worker's cores.
    executors: Type.Array(ExecutorDescription, { maxItems: MAX_WORKER_CORES }),
    driverIds: Type.Array(DriverId, { maxItems: MAX_WORKER_CORES }),
  },
);

export const WorkerDecommissioning = defineMessage(
  w2m,
  'WorkerDecommissioning',
  'The worker is decommissioning (the master asked, or it got SIGPWR): it takes no new executors or drivers, lets what runs finish, then exits.',
  { id: WorkerId },
);

// Master → Worker

const m2w = boundary('Master → Worker', 'master', 'worker');

export const RegisteredWorker = defineMessage(m2w, 'RegisteredWorker', 'Registration succeeded.', {
  master: EndpointRefData,
  masterWebUiUrl: Url(),
  masterAddress: Type.String({ maxLength: MAX_ADDRESS_LENGTH }),
});

export const RegisterWorkerFailed = defineMessage(
  m2w,
  'RegisterWorkerFailed',
  'Registration was refused.',
  {
    message: Message(),
  },
);

export const MasterInStandby = defineMessage(
  m2w,
  'MasterInStandby',
  'The master is a standby and does not take registrations.',
  {},
);

export const ReconnectWorker = defineMessage(
  m2w,
  'ReconnectWorker',
  'The master had dropped this worker: register again.',
  { masterUrl: Url() },
);

export const LaunchExecutor = defineMessage(
  m2w,
  'LaunchExecutor',
  'Start an executor for an application.',
  {
    masterUrl: Url(),
    appId: AppId,
    execId: ExecId,
    appDesc: ApplicationDescription,
    cores: Cores,
    memory: MemoryMB,
    resources: Type.Optional(ResourceAddresses),
  },
);

export const KillExecutor = defineMessage(
  m2w,
  'KillExecutor',
  "Kill an executor's whole process tree.",
  {
    masterUrl: Url(),
    appId: AppId,
    execId: ExecId,
  },
);

export const LaunchDriver = defineMessage(
  m2w,
  'LaunchDriver',
  'Start a driver (cluster deploy mode).',
  {
    driverId: DriverId,
    driverDesc: DriverDescription,
  },
);

export const KillDriver = defineMessage(m2w, 'KillDriver', "Kill a driver's whole process tree.", {
  driverId: DriverId,
});

export const ApplicationFinished = defineMessage(
  m2w,
  'ApplicationFinished',
  'An application ended: delete its local directories.',
  { id: AppId },
);

export const DecommissionWorker = defineMessage(
  m2w,
  'DecommissionWorker',
  'Decommission yourself (an operator asked the master: DecommissionWorkersOnHosts).',
  {},
);

export const MasterChanged = defineMessage(
  boundary('Master → Worker and application', 'master', ['worker', 'driver']),
  'MasterChanged',
  'A new master leads: switch to it and report state (WorkerSchedulerStateResponse or MasterChangeAcknowledged).',
  { master: EndpointRefData, masterWebUiUrl: Url() },
);

const anyToMaster = boundary('Any client → Master', 'any', 'master');

export const BoundPortsRequest = defineMessage(
  anyToMaster,
  'BoundPortsRequest',
  "Asks the master's ports.",
  {},
  { reply: () => BoundPortsResponse },
);

export const BoundPortsResponse = defineMessage(
  anyToMaster,
  'BoundPortsResponse',
  'The answer to BoundPortsRequest.',
  {
    rpcEndpointPort: Type.Integer({ minimum: 0, maximum: 65535 }),
    webUIPort: Type.Integer({ minimum: 0, maximum: 65535 }),
  },
);
