import type {
  HistoryAppInfo,
  HistoryInfo,
  KillResult,
  KillTarget,
  LogRange,
  LogSource,
  WorkerState,
} from '../protocol.js';
import type { DataSource, FeedListener, FollowSink } from './DataSource.js';
import { HttpDataSource } from './HttpDataSource.js';

/** What the history server cannot give: the logs and states of processes it never talks to. */
export const NO_EXECUTOR_LOGS =
  'The history server reads event logs only: an executor’s stdout and stderr stay with its worker (open them from the master’s web UI while the worker keeps them).';

/**
 * The dashboard served by `wick history-server` (Spark's HistoryServer): every page reads
 * `/api/v1` over a finished (or cut) event log when it opens. Nothing is live, so nothing is
 * subscribed to and nothing polls; there is no master, no worker and nothing to kill.
 */
export class HistoryDataSource implements DataSource {
  private readonly http: HttpDataSource;

  constructor(private readonly base = '') {
    this.http = new HttpDataSource(base);
  }

  /** No feed: the page is "connected" at once, with no master state. */
  subscribe(listener: FeedListener): () => void {
    listener.connection(true);
    return () => {};
  }

  readLog(_source: LogSource, _offset: number | undefined, _length: number): Promise<LogRange> {
    return Promise.reject(new Error(NO_EXECUTOR_LOGS));
  }

  followLog(_source: LogSource, _offset: number, sink: FollowSink): () => void {
    queueMicrotask(() => sink.ended(-1, NO_EXECUTOR_LOGS));
    return () => {};
  }

  kill(_target: KillTarget): Promise<KillResult> {
    return Promise.resolve({
      success: false,
      message: 'The history server shows finished runs: there is nothing to kill.',
    });
  }

  api(path: string): Promise<unknown> {
    return this.http.api(path);
  }

  workerState(_workerId: string | undefined): Promise<WorkerState> {
    return Promise.reject(new Error('The history server knows no workers.'));
  }

  /** `/api/history`: the folder, its unreadable logs, its cut and failed ones. */
  historyInfo(): Promise<HistoryInfo> {
    return this.json('/api/history') as Promise<HistoryInfo>;
  }

  /** `/api/history/applications/{app}`: one application's log and how it ended. */
  historyApp(appId: string): Promise<HistoryAppInfo> {
    return this.json(
      `/api/history/applications/${encodeURIComponent(appId)}`,
    ) as Promise<HistoryAppInfo>;
  }

  private async json(path: string): Promise<unknown> {
    const res = await fetch(`${this.base}${path}`);
    if (!res.ok) {
      const text = (await res.text().catch(() => '')).trim();
      let message = text;
      try {
        message = (JSON.parse(text) as { error?: string }).error ?? text;
      } catch {}
      throw new Error(message || `${res.status} ${res.statusText}`);
    }
    return res.json();
  }
}
