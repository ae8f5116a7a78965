import { Type } from '@sinclair/typebox';
import { Host, MAX_ADDRESS_LENGTH, MAX_WORKERS, Message } from './bounds.js';
import {
  AppId,
  DriverDescription,
  DriverId,
  DriverStateSchema,
  EndpointRefData,
  WorkerId,
} from './common.js';
import { boundary, defineMessage } from './registry.js';

/** `wick submit / kill / status` and other clients ↔ the Master (Spark's ClientEndpoint). */

const c2m = boundary('Client ↔ Master', 'client', 'master');

export const RequestSubmitDriver = defineMessage(
  c2m,
  'RequestSubmitDriver',
  'Submit a driver in cluster mode.',
  {
    driverDescription: DriverDescription,
  },
  { reply: () => SubmitDriverResponse },
);

export const SubmitDriverResponse = defineMessage(
  c2m,
  'SubmitDriverResponse',
  'The answer to RequestSubmitDriver.',
  {
    master: EndpointRefData,
    success: Type.Boolean(),
    driverId: Type.Optional(DriverId),
    message: Message(),
  },
);

export const RequestKillDriver = defineMessage(
  c2m,
  'RequestKillDriver',
  'Kill a driver.',
  {
    driverId: DriverId,
  },
  { reply: () => KillDriverResponse },
);

export const KillDriverResponse = defineMessage(
  c2m,
  'KillDriverResponse',
  'The answer to RequestKillDriver.',
  {
    master: EndpointRefData,
    driverId: DriverId,
    success: Type.Boolean(),
    message: Message(),
  },
);

export const RequestDriverStatus = defineMessage(
  c2m,
  'RequestDriverStatus',
  "Ask a driver's state.",
  {
    driverId: DriverId,
  },
  { reply: () => DriverStatusResponse },
);

export const DriverStatusResponse = defineMessage(
  c2m,
  'DriverStatusResponse',
  'The answer to RequestDriverStatus.',
  {
    found: Type.Boolean(),
    state: Type.Optional(DriverStateSchema),
    workerId: Type.Optional(WorkerId),
    workerHostPort: Type.Optional(Type.String({ maxLength: MAX_ADDRESS_LENGTH })),
    exception: Type.Optional(Message()),
  },
);

export const RequestKillApplication = defineMessage(
  c2m,
  'RequestKillApplication',
  "Kill an application (Spark's KillApplication from the UI).",
  { appId: AppId },
  { reply: () => KillApplicationResponse },
);

export const KillApplicationResponse = defineMessage(
  c2m,
  'KillApplicationResponse',
  'The answer to RequestKillApplication.',
  { appId: AppId, success: Type.Boolean(), message: Message() },
);

/** The most hosts or workers one DecommissionWorkersOnHosts names. */
export const MAX_DECOMMISSION_TARGETS = 1000;

export const DecommissionWorkersOnHosts = defineMessage(
  c2m,
  'DecommissionWorkersOnHosts',
  "Decommission every worker on these hosts (Spark's, from POST /workers/kill/), and the workers with these ids (Wick's: several workers may share a host).",
  {
    hostnames: Type.Array(Host, { maxItems: MAX_DECOMMISSION_TARGETS }),
    workerIds: Type.Optional(Type.Array(WorkerId, { maxItems: MAX_DECOMMISSION_TARGETS })),
  },
  { reply: () => WorkersDecommissioned },
);

export const WorkersDecommissioned = defineMessage(
  c2m,
  'WorkersDecommissioned',
  'The answer to DecommissionWorkersOnHosts: the workers it decommissioned (Spark answers their number); none is not a success.',
  {
    success: Type.Boolean(),
    workerIds: Type.Array(WorkerId, { maxItems: MAX_WORKERS }),
    message: Message(),
  },
);

/** The longest /api/v1 path a client asks through the master (RequestAppStatusApi). */
export const MAX_API_PATH_LENGTH = 1024;
/**
 * The /api/v1 paths a client may ask through the master: an application's own, and the list
 * (Spark's ApiRootResource), with a query of plain characters; no segment is `.` or `..`.
 */
export const API_PATH_PATTERN =
  '^/applications(/(?!\\.\\.?(/|\\?|$))[A-Za-z0-9._-]+)*(\\?[A-Za-z0-9._=&,%-]*)?$';
/** The largest /api/v1 answer sent back (a taskList page of 10,000 tasks fits). */
export const MAX_API_BODY_BYTES = 8 * 1024 * 1024;

export const RequestAppStatusApi = defineMessage(
  c2m,
  'RequestAppStatusApi',
  "Read the master's /api/v1 (Spark's REST API) at a path, as its web UI serves it: for a client that cannot reach the web UI (the VS Code panel, through its agent).",
  {
    path: Type.String({ minLength: 1, maxLength: MAX_API_PATH_LENGTH, pattern: API_PATH_PATTERN }),
  },
  { reply: () => AppStatusApiResponse },
);

export const AppStatusApiResponse = defineMessage(
  c2m,
  'AppStatusApiResponse',
  'The answer to RequestAppStatusApi: the HTTP status the web UI would answer, and its JSON body.',
  {
    status: Type.Integer({ minimum: 100, maximum: 599 }),
    body: Type.String({ maxLength: MAX_API_BODY_BYTES }),
  },
);
