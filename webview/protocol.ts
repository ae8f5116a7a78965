import { type Static, Type } from '@sinclair/typebox';
import { MAX_COUNTER, MAX_ID_LENGTH, MAX_INT32 } from '../backend/protocol/bounds.js';
import { API_PATH_PATTERN, MAX_API_PATH_LENGTH } from '../backend/protocol/client.js';
import type { MessageOf } from '../backend/protocol/registry.js';
import type { MasterStateEvent, MasterStateResponse } from '../backend/protocol/state.js';
import type { WorkerStateResponse } from '../backend/protocol/worker.js';
import type { UtilizationSample } from '../backend/shared/utilization.js';

/**
 * The dashboard's boundary, shared by the webview and the two hosts that feed it: the master's or
 * a worker's web UI (over HTTP and Server-Sent Events) and the VS Code extension (over
 * postMessage). The webview imports this file for its types only, so the schemas below never
 * reach the browser bundle; the extension validates what a panel sends with them, because a
 * panel's script is the less trusted side.
 */

export type MasterState = MessageOf<typeof MasterStateResponse>;
export type MasterStateChange = MessageOf<typeof MasterStateEvent>;
export type WorkerState = MessageOf<typeof WorkerStateResponse>;
export type { UtilizationSample };

/** What the host lets the page do. */
export interface Capabilities {
  /**
   * wick.ui.killEnabled. With authentication on, a kill needs nothing more than the page's own
   * login (the web UI's session, or the extension's agent): the dialog does not ask for the secret.
   */
  killEnabled: boolean;
}

/** The master's state when the page connects, with the chart's history. */
export interface DashboardSnapshot {
  state: MasterState;
  utilization: UtilizationSample[];
  capabilities: Capabilities;
}

/**
 * Which page set the host serves: a master's whole cluster, one worker, or a history server's
 * logged applications (Spark's HistoryServer: nothing live, each page read from its event log).
 */
export type DashboardMode = 'master' | 'worker' | 'history';

/** The configuration a host embeds in the page (a JSON data block, never a script). */
export interface DashboardConfig {
  mode: DashboardMode;
  host: 'web' | 'vscode';
  /** In worker mode: the worker's id. */
  workerId?: string;
}

/** A history server's `/api/history`: its folder, and what in it cannot be listed. */
export interface HistoryInfo {
  logDir: string;
  /** How many logs cannot be read; `unreadable` names the first of them. */
  unreadableCount: number;
  unreadable: { name: string; reason: string }[];
  /** The applications whose log ends inside a line: listed as incomplete, read up to the break. */
  cut: string[];
  /** The applications whose log ends with a failure. */
  failed: string[];
}

/** A history server's `/api/history/applications/{app}`: its log, and how it ended. */
export interface HistoryAppInfo {
  appId: string;
  logName: string;
  fileSize: number;
  cut: boolean;
  compressed: boolean;
  rolled: boolean;
  /** From its ApplicationEnd: why it failed (the driver's message, with the user's stack). */
  failure?: string;
}

/**
 * A run of an earlier local cluster of the editor's folder (before a reload or a restart), as the
 * panel is told of it: its pages are read from its event log, by the agent, whatever master the
 * window is connected to now (backend/agent/pastRunPages.ts).
 */
export interface PastRunBrief {
  appId: string;
  name: string;
  state: string;
}

export const LogSource = Type.Object(
  {
    appId: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_ID_LENGTH })),
    executorId: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_INT32 })),
    driverId: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_ID_LENGTH })),
    logType: Type.Union([Type.Literal('stdout'), Type.Literal('stderr')]),
  },
  { additionalProperties: false },
);
/** An executor's log (appId + executorId) or a driver's (driverId), as Spark's log page names it. */
export type LogSource = Static<typeof LogSource>;

/** Bytes of a log, as Spark's log page pages it: offset and length in bytes, base64 on the wire. */
export interface LogRange {
  offset: number;
  length: number;
  totalSize: number;
  data: string;
}

export const KillTarget = Type.Union([
  Type.Object(
    { kind: Type.Literal('app'), id: Type.String({ minLength: 1, maxLength: MAX_ID_LENGTH }) },
    { additionalProperties: false },
  ),
  Type.Object(
    { kind: Type.Literal('driver'), id: Type.String({ minLength: 1, maxLength: MAX_ID_LENGTH }) },
    { additionalProperties: false },
  ),
]);
export type KillTarget = Static<typeof KillTarget>;

export interface KillResult {
  success: boolean;
  message: string;
  /** The user said no to the confirmation: nothing to report. */
  cancelled?: boolean;
}

// Panel → Extension

/**
 * A path under /api/v1 the panel may ask: an application's, as the dashboard's pages read them
 * (the agent's RPC to the master checks it again: ../backend/protocol/client.ts).
 */
export const ApiPath = Type.String({
  minLength: 1,
  maxLength: MAX_API_PATH_LENGTH,
  pattern: API_PATH_PATTERN,
});

const RequestId = Type.Integer({ minimum: 0, maximum: MAX_COUNTER });
const FollowId = Type.String({ minLength: 1, maxLength: 100 });

export const PanelToExtension = Type.Union([
  /** The page has loaded: send the snapshot, then every change. */
  Type.Object({ type: Type.Literal('ready') }, { additionalProperties: false }),
  /** Read a byte range of a log; without offset, its last `length` bytes. */
  Type.Object(
    {
      type: Type.Literal('requestLogRange'),
      requestId: RequestId,
      source: LogSource,
      offset: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_COUNTER })),
      length: Type.Integer({ minimum: 0, maximum: 16 * 1024 * 1024 }),
    },
    { additionalProperties: false },
  ),
  /** Push a log's bytes from offset on as they are written (logChunk … logFollowEnded). */
  Type.Object(
    {
      type: Type.Literal('followLog'),
      followId: FollowId,
      source: LogSource,
      offset: Type.Integer({ minimum: 0, maximum: MAX_COUNTER }),
    },
    { additionalProperties: false },
  ),
  /** Stop a follow; the panel sends it when the log view closes. */
  Type.Object(
    { type: Type.Literal('stopFollowLog'), followId: FollowId },
    { additionalProperties: false },
  ),
  /** Kill an application or a driver (the extension asks the user, and checks killEnabled). */
  Type.Object(
    { type: Type.Literal('kill'), requestId: RequestId, target: KillTarget },
    { additionalProperties: false },
  ),
  /** The route the page shows now (after each move, and once on load). */
  Type.Object(
    { type: Type.Literal('route'), hash: Type.String({ minLength: 1, maxLength: 2048 }) },
    { additionalProperties: false },
  ),
  /** Ask the master's /api/v1 (Spark's REST API) at `path`, as the web UI's page fetches it. */
  Type.Object(
    {
      type: Type.Literal('requestApi'),
      requestId: RequestId,
      path: ApiPath,
    },
    { additionalProperties: false },
  ),
  /** Ask a past run's event log (its name, size, how it ended): its application page's facts. */
  Type.Object(
    {
      type: Type.Literal('requestHistoryApp'),
      requestId: RequestId,
      appId: Type.String({ minLength: 1, maxLength: MAX_ID_LENGTH }),
    },
    { additionalProperties: false },
  ),
  /** Ask one worker's own state (its runners, finished ones included). */
  Type.Object(
    {
      type: Type.Literal('requestWorkerState'),
      requestId: RequestId,
      workerId: Type.String({ minLength: 1, maxLength: MAX_ID_LENGTH }),
    },
    { additionalProperties: false },
  ),
]);
export type PanelToExtension = Static<typeof PanelToExtension>;

// Extension → Panel

export type ExtensionToPanel =
  /** The state now; sent after `ready` and after every reconnection. */
  | { type: 'snapshot'; snapshot: DashboardSnapshot }
  /** A change after the snapshot, in seq order. */
  | { type: 'stateChanged'; event: MasterStateChange }
  /** The connection to the master was lost or came back. */
  | { type: 'connection'; connected: boolean; message?: string }
  | { type: 'logRange'; requestId: number; range?: LogRange; error?: string }
  | { type: 'logChunk'; followId: string; offset: number; data: string }
  | { type: 'logFollowEnded'; followId: string; totalSize: number; reason: string }
  | { type: 'killResult'; requestId: number; result: KillResult }
  | { type: 'workerState'; requestId: number; state?: WorkerState; error?: string }
  /** /api/v1's answer as text (JSON), or why there is none. */
  | { type: 'apiResult'; requestId: number; body?: string; error?: string }
  /** A past run's event log, or why there is none. */
  | { type: 'historyApp'; requestId: number; info?: HistoryAppInfo; error?: string }
  /** The runs of earlier local clusters (on `ready`, and when they change): read from their logs. */
  | { type: 'pastRuns'; runs: PastRunBrief[] }
  /** Show this route (`#/app/ID`): the extension opens a page in the panel. */
  | { type: 'navigate'; hash: string };
