import type {
  DashboardSnapshot,
  HistoryAppInfo,
  HistoryInfo,
  KillResult,
  KillTarget,
  LogRange,
  LogSource,
  MasterStateChange,
  PastRunBrief,
  WorkerState,
} from '../protocol.js';

/**
 * Where the dashboard's data comes from. Three hosts implement it: the web UI of a master or a
 * worker (HttpDataSource: fetch and Server-Sent Events), the VS Code extension
 * (VsCodeDataSource: postMessage), and a history server (HistoryDataSource: fetch only). Everything live is pushed; nothing here polls.
 */
export interface DataSource {
  /** Starts the live feed; returns a function that stops it. */
  subscribe(listener: FeedListener): () => void;
  /** A byte range of a log; without offset, the last `length` bytes. */
  readLog(source: LogSource, offset: number | undefined, length: number): Promise<LogRange>;
  /** Pushes a log's bytes from `offset` on, as written; returns a function that stops it. */
  followLog(source: LogSource, offset: number, sink: FollowSink): () => void;
  kill(target: KillTarget): Promise<KillResult>;
  /**
   * Spark's REST API of the master (`/api/v1` + `path`, e.g. `/applications/ID/jobs`): its JSON,
   * or an error with the answer's message. Asked when the pushed state says something changed.
   */
  api(path: string): Promise<unknown>;
  /** A worker's own state; undefined for this worker's own page in worker mode. */
  workerState(workerId: string | undefined): Promise<WorkerState>;
  /** A history server's folder and what in it cannot be listed (HistoryDataSource only). */
  historyInfo?(): Promise<HistoryInfo>;
  /** One logged application's log and how it ended (a history server's; a past run's in VS Code). */
  historyApp?(appId: string): Promise<HistoryAppInfo>;
}

export interface FeedListener {
  /** The master's state (on connect and on every reconnection). */
  snapshot(snapshot: DashboardSnapshot): void;
  change(event: MasterStateChange): void;
  /** Worker mode: the worker's state changed (or the page just connected). */
  workerChanged?(): void;
  connection(connected: boolean, message?: string): void;
  /** VS Code: the runs of earlier local clusters, whose pages come from their event logs. */
  pastRuns?(runs: PastRunBrief[]): void;
}

export interface FollowSink {
  chunk(offset: number, bytes: Uint8Array): void;
  ended(totalSize: number, reason: string): void;
}

/** base64 → bytes, without Node's Buffer. */
export function decodeBase64(data: string): Uint8Array {
  const bin = atob(data);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}
