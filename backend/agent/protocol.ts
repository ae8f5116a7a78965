/**
 * Extension ↔ agent: the custom messages carried over the language-client connection (stdio,
 * no documents). Imported by both sides (vscode-eslint's `$shared/customMessages.ts`), so it
 * holds only types and method names: nothing here may pull backend code into the extension.
 * The log messages carry the fields of the worker's own (backend/protocol/worker.ts), typed from
 * its schemas, so that the two cannot drift apart; only the source is grouped, as one value.
 */
import { NotificationType, RequestType } from 'vscode-jsonrpc';
import type { AppFailure } from '../protocol/common.js';
import type { MessageOf } from '../protocol/registry.js';
import type { MasterStateResponse } from '../protocol/state.js';
import type * as worker from '../protocol/worker.js';
import type { LogSource, LogStream } from '../shared/logSource.js';

export type { LogSource, LogStream };

/** A worker log message's fields, without its type tag. */
type Fields<D> = Omit<MessageOf<D>, 'type'>;

export type MasterState = MessageOf<typeof MasterStateResponse>;

/** Where the agent stands with its master. */
export type Connection =
  | { kind: 'disconnected' }
  | { kind: 'connecting'; target: string; message: string }
  | { kind: 'connected'; url: string; webUiUrl: string; local: boolean }
  | { kind: 'error'; target: string; message: string };

export interface LocalClusterSettings {
  workers: number;
  cores: number;
  memory: string;
  /**
   * Folders the local cluster's confined executors and drivers may read (the window's workspace
   * folders): absolute paths, at most MAX_READ_ONLY_PATHS. See localClusterConf.ts.
   */
  readOnlyPaths?: string[];
}

// Extension → Agent (requests)

export interface ConnectParams {
  /** `local` or wick://host:port[,host:port…] */
  master: string;
  localCluster: LocalClusterSettings;
  /** wick.ui.reverseProxy: read every log through the master (else only unreachable workers'). */
  reverseProxy?: boolean;
  /**
   * Where the local cluster's runs are kept across windows (the extension's storage folder): their
   * records, their driver output, and the cluster's work dir with the executors' logs. Without
   * it, the local cluster works in a temporary folder removed when it stops, and keeps no runs.
   */
  runsDir?: string;
}
/** Connect to a master (starting the embedded local cluster for `local`); idempotent. */
export const Connect = new RequestType<ConnectParams, Connection, void>('wick/connect');

/** Forget the master; `stopLocalCluster` also stops an embedded cluster. */
export const Disconnect = new RequestType<{ stopLocalCluster: boolean }, Connection, void>(
  'wick/disconnect',
);

/** The connection and the latest state, now. */
export const RequestStatus = new RequestType<
  Record<string, never>,
  {
    connection: Connection;
    state?: MasterState;
    pid: number;
    rssBytes: number;
    /** The local cluster's work dir, when it is kept (ConnectParams.runsDir). */
    clusterDir?: string;
  },
  void
>('wick/status');

export interface SubmitParams {
  file: string;
  args: string[];
  deployMode: 'client' | 'cluster';
  executorMemory?: string;
  executorCores?: number;
  /** wick.cores.max: the cores the application may take over the whole cluster. */
  maxCores?: number;
  supervise?: boolean;
  name?: string;
  /**
   * Push the driver's stdout and stderr as DriverOutput notifications under this id (1–64 of
   * `[A-Za-z0-9_-]`, chosen by the extension before it asks), then DriverExited.
   */
  outputId?: string;
}
/** Submit an application; resolves once the master knows it (appId), or a driver id in cluster mode. */
export const SubmitApplication = new RequestType<
  SubmitParams,
  { success: boolean; message: string; appId?: string; driverId?: string },
  void
>('wick/submit');

/** Kill an application (app-…) or a driver (driver-…). */
/**
 * Bundle an application as its driver would, without a master (nothing runs): its syntax errors
 * at once, while the cluster starts. A failure also comes as the run's DriverOutput and
 * DriverExited under `outputId`, before the answer, as a submit's would.
 */
export const CheckApplication = new RequestType<
  { file: string; outputId?: string },
  { success: boolean; message: string },
  void
>('wick/checkApplication');

export const Kill = new RequestType<{ id: string }, { success: boolean; message: string }, void>(
  'wick/kill',
);

export type LogRangeParams = { source: LogSource; stream: LogStream } & Pick<
  Fields<typeof worker.RequestLogRange>,
  'offset'
> &
  Required<Pick<Fields<typeof worker.RequestLogRange>, 'length'>>;
export type LogRange = Pick<
  Fields<typeof worker.LogRangeResponse>,
  'data' | 'offset' | 'totalSize'
>;
/** Bytes of a log (base64), read from the worker that ran the process; without offset, the last `length`. */
export const RequestLogRange = new RequestType<LogRangeParams, LogRange, void>('wick/logRange');

export type FollowLogParams = { source: LogSource; stream: LogStream } & Pick<
  Fields<typeof worker.FollowLog>,
  'followId' | 'offset'
>;
/** Push a log from `offset` on as LogChunk notifications until StopFollowLog or LogFollowEnded. */
export const FollowLog = new RequestType<
  FollowLogParams,
  Pick<Fields<typeof worker.LogFollowStarted>, 'totalSize'>,
  void
>('wick/followLog');

export const StopFollowLog = new NotificationType<Fields<typeof worker.StopFollowLog>>(
  'wick/stopFollowLog',
);

/** Whose web UI: the connected master's, or one of its workers' (by id, as the master lists it). */
export type UiTarget =
  | { kind: 'master' }
  | { kind: 'worker'; workerId: string }
  /** The master's dashboard on an application's page. */
  | { kind: 'app'; appId: string };
/**
 * The address to open that web UI at: with cluster authentication on, a one-time login link
 * (`wick ui-url`'s), made by the agent from the cluster secret; the address itself when off.
 */
export const RequestUiLink = new RequestType<UiTarget, { url: string; login: boolean }, void>(
  'wick/uiLink',
);

export type WorkerState = MessageOf<typeof worker.WorkerStateResponse>;
/** A worker's own state, asked of the worker (the dashboard panel's worker page). */
export const RequestWorkerStateOf = new RequestType<{ workerId: string }, WorkerState, void>(
  'wick/workerState',
);

/**
 * The master's /api/v1 at `path` (Spark's REST API: an application's jobs, stages, tasks), asked
 * of the master over the agent's authenticated connection (RequestAppStatusApi): the dashboard
 * panel's job and stage pages. `body` is the JSON as the web UI would answer it.
 */
export const RequestAppStatusApiOf = new RequestType<
  { path: string },
  { status: number; body: string },
  void
>('wick/appStatusApi');

/**
 * A run of an earlier local cluster of this folder's windows (before a reload or a restart), from
 * the agent's records and the run's event log: what the Applications view shows under Completed.
 */
export interface PastRun {
  appId: string;
  name: string;
  /** How it ended: the master's word, its event log's, or KILLED when its cluster ended under it. */
  state: 'FINISHED' | 'FAILED' | 'KILLED' | 'UNKNOWN';
  startTime: number;
  endTime?: number;
  /** Why it ended so, when it did not end by itself (its local cluster ended with the window). */
  message?: string;
  failure?: AppFailure;
  /** The file submitted from the editor, when it was. */
  file?: string;
  /** Its jobs, from its event log (absent without one). */
  jobs?: { succeeded: number; failed: number; running: number };
  /** The event log it was read from. */
  eventLog?: string;
  /** The driver's stdout and stderr as the window showed them: a file, if it is still there. */
  output?: { path: string; exists: boolean };
  /** Its executors' logs in the cluster's work dir: the files still there; `removed` when none is. */
  logs: {
    dir: string;
    removed: boolean;
    files: { execId: number; stream: LogStream; path: string }[];
  };
}

/** The runs of this folder's earlier local clusters, newest first (at most 100). */
export const RequestPastRuns = new RequestType<Record<string, never>, { runs: PastRun[] }, void>(
  'wick/pastRuns',
);

/**
 * A past run's event log, as its dashboard page names it (the history server's
 * `/api/history/applications/{app}`, webview/protocol.ts HistoryAppInfo, field for field).
 */
export interface PastRunLog {
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
 * A past run's event log (the dashboard panel's page of a run the master no longer has), or why
 * there is none. Only a run of this folder's earlier local clusters is answered: the agent reads
 * no other application's log for the editor.
 */
export const RequestPastRunLog = new RequestType<
  { appId: string },
  { log?: PastRunLog; reason?: string },
  void
>('wick/pastRunLog');

/** The task whose failures failed a run's job, from the run's event log (failedTaskFromLog.ts). */
export interface LoggedFailedTask {
  jobId: number;
  stageId: number;
  stageAttemptId: number;
  /** The partition it computed (its TaskEnd's index): where Debug Failed Task stops. */
  partitionId: number;
  taskId: number;
  executorId: string;
  /** How many times that partition failed in the job (wick.task.maxFailures, when it aborted it). */
  failures: number;
  /** Its last error, with the user's stack (source-mapped on the executor). */
  error: string;
  /** The job's failure, as its JobEnd says. */
  jobError?: string;
}
/**
 * Debug Failed Task for a past run: its failed task from its event log, or why there is none
 * (no log, or no job failed because of a task). A run of this folder's earlier local clusters only.
 */
export const RequestPastRunFailedTask = new RequestType<
  { appId: string },
  { task?: LoggedFailedTask; reason?: string },
  void
>('wick/pastRunFailedTask');

// Agent → Extension (notifications)

/** The past runs changed (read once a local cluster starts; a reload's runs marked as ended). */
export const PastRunsChanged = new NotificationType<{ runs: PastRun[] }>('wick/pastRunsChanged');

/** Every change: the connection and the whole (small) master state; the extension debounces. */
export const StateChanged = new NotificationType<{
  connection: Connection;
  state?: MasterState;
  /** ms since the epoch at the agent when the change arrived, for the tree benchmark. */
  at: number;
}>('wick/stateChanged');

/** Bytes of a followed log at `offset` (base64), in order. */
export const LogChunk = new NotificationType<Fields<typeof worker.LogChunk>>('wick/logChunk');

/** A follow ended: the process exited and the file is drained, or the worker went away (-1). */
export const LogFollowEnded = new NotificationType<Fields<typeof worker.LogFollowEnded>>(
  'wick/logFollowEnded',
);

/**
 * Text the submitted driver wrote on `stream`, in order, at most 16 KiB characters each: the
 * client-mode child's pipes, or the cluster-mode driver's logs on its worker.
 */
export const DriverOutput = new NotificationType<{
  outputId: string;
  stream: LogStream;
  data: string;
}>('wick/driverOutput');

/**
 * The driver's output is complete: the client-mode child exited (`exitCode`, null when a signal
 * ended it), or the cluster-mode driver's logs ended (`exitCode` null; its state says how it
 * ended). `reason` says which, for the user.
 */
export const DriverExited = new NotificationType<{
  outputId: string;
  exitCode: number | null;
  reason: string;
}>('wick/driverExited');

/**
 * Where a submit stands, for the editor's progress notification ("Bundling…", "Starting the
 * driver…"): sent while the SubmitApplication request with that `outputId` is unanswered.
 */
export const SubmitProgress = new NotificationType<{ outputId: string; message: string }>(
  'wick/submitProgress',
);
