import type {
  DashboardSnapshot,
  KillResult,
  KillTarget,
  LogRange,
  LogSource,
  MasterStateChange,
  WorkerState,
} from '../protocol.js';
import { type DataSource, decodeBase64, type FeedListener, type FollowSink } from './DataSource.js';

/** The header that marks a request as the dashboard's own; a cross-site form cannot set it. */
export const CSRF_HEADER = 'X-Wick-Request';

/**
 * The dashboard served by a master's or a worker's web UI: state and log follows arrive over
 * Server-Sent Events (the browser reconnects by itself, and the host then sends a fresh snapshot),
 * log ranges, worker states and kills are single requests.
 */
export class HttpDataSource implements DataSource {
  /** `base`: the path the page was served under (pageBase), '' at the server's root. */
  constructor(private readonly base = '') {}

  subscribe(listener: FeedListener): () => void {
    const es = new EventSource(`${this.base}/api/events`);
    es.addEventListener('snapshot', (e) =>
      listener.snapshot(JSON.parse((e as MessageEvent<string>).data) as DashboardSnapshot),
    );
    es.addEventListener('change', (e) =>
      listener.change(JSON.parse((e as MessageEvent<string>).data) as MasterStateChange),
    );
    es.addEventListener('worker', () => listener.workerChanged?.());
    es.addEventListener('open', () => listener.connection(true));
    es.addEventListener('error', () =>
      listener.connection(false, 'Lost the connection to the web UI; reconnecting…'),
    );
    return () => es.close();
  }

  async readLog(source: LogSource, offset: number | undefined, length: number): Promise<LogRange> {
    const q = logQuery(source);
    if (offset !== undefined) q.set('offset', String(offset));
    q.set('byteLength', String(length));
    return (await this.json(`/api/log?${q}`)) as LogRange;
  }

  followLog(source: LogSource, offset: number, sink: FollowSink): () => void {
    const q = logQuery(source);
    q.set('offset', String(offset));
    const es = new EventSource(`${this.base}/api/log/follow?${q}`);
    let done = false;
    const end = (totalSize: number, reason: string) => {
      if (done) return;
      done = true;
      es.close();
      sink.ended(totalSize, reason);
    };
    es.addEventListener('chunk', (e) => {
      const c = JSON.parse((e as MessageEvent<string>).data) as { offset: number; data: string };
      sink.chunk(c.offset, decodeBase64(c.data));
    });
    es.addEventListener('end', (e) => {
      const m = JSON.parse((e as MessageEvent<string>).data) as {
        totalSize: number;
        reason: string;
      };
      end(m.totalSize, m.reason);
    });
    // A follow is not resumed by EventSource's own reconnection: it would start again at the
    // first offset. The viewer shows why it stopped and offers to follow again.
    es.addEventListener('error', () => end(-1, 'the connection was lost'));
    return () => {
      done = true;
      es.close();
    };
  }

  /** With authentication on, the session cookie goes with it (same origin): nothing else is needed. */
  async kill(target: KillTarget): Promise<KillResult> {
    const res = await fetch(`${this.base}/api/kill`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [CSRF_HEADER]: '1' },
      body: JSON.stringify(target),
      credentials: 'same-origin',
    });
    const body = (await res.json().catch(() => undefined)) as Partial<KillResult> | undefined;
    return {
      success: res.ok && body?.success === true,
      message: body?.message ?? `The web UI answered ${res.status} ${res.statusText}`,
    };
  }

  api(path: string): Promise<unknown> {
    return this.json(`/api/v1${path}`);
  }

  async workerState(workerId: string | undefined): Promise<WorkerState> {
    const path =
      workerId === undefined ? '/api/worker' : `/api/worker/${encodeURIComponent(workerId)}`;
    return (await this.json(path)) as WorkerState;
  }

  private async json(path: string): Promise<unknown> {
    const res = await fetch(`${this.base}${path}`);
    if (!res.ok) {
      const text = await res.text().catch(() => '');
      throw new Error(errorText(text) || `${res.status} ${res.statusText}`);
    }
    return res.json();
  }
}

/** `/api/v1` answers `{"error": "…"}`; other routes, plain text. */
function errorText(text: string): string {
  try {
    const j = JSON.parse(text) as { error?: unknown };
    if (typeof j.error === 'string') return j.error;
  } catch {}
  return text.trim();
}

function logQuery(source: LogSource): URLSearchParams {
  const q = new URLSearchParams();
  if (source.appId !== undefined) q.set('appId', source.appId);
  if (source.executorId !== undefined) q.set('executorId', String(source.executorId));
  if (source.driverId !== undefined) q.set('driverId', source.driverId);
  q.set('logType', source.logType);
  return q;
}

/**
 * The path prefix a dashboard page was served under: '' at a web UI's root, `/proxy/8080` behind
 * a path-based proxy (code-server's port forwarding, a reverse proxy). The page's requests go
 * under it, so the same page works at either place.
 */
export function pageBase(pathname: string): string {
  return pathname.slice(0, pathname.lastIndexOf('/'));
}
