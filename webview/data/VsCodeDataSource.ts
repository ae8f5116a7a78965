import type {
  ExtensionToPanel,
  HistoryAppInfo,
  KillResult,
  KillTarget,
  LogRange,
  LogSource,
  PanelToExtension,
  WorkerState,
} from '../protocol.js';
import { type DataSource, decodeBase64, type FeedListener, type FollowSink } from './DataSource.js';

/** What acquireVsCodeApi() returns, as far as the dashboard uses it. */
export interface VsCodeApi {
  postMessage(message: PanelToExtension): void;
  /** The webview's saved state (the panel's place: navigation.ts). */
  getState(): unknown;
  setState(state: unknown): void;
}

/** Where the panel hears the extension: `window` in a real webview. */
export interface MessageTarget {
  addEventListener(type: 'message', fn: (e: MessageEvent) => void): void;
  removeEventListener(type: 'message', fn: (e: MessageEvent) => void): void;
}

/**
 * The dashboard inside a VS Code webview panel: the extension (through its agent) owns every
 * connection; the panel asks and listens over postMessage (messages in ../protocol.ts). The
 * extension asks the user before a kill, and the agent's connection is authenticated already.
 */
export class VsCodeDataSource implements DataSource {
  private nextId = 0;
  private readonly pending = new Map<number, (m: ExtensionToPanel) => void>();
  private readonly follows = new Map<string, FollowSink>();
  private feed: FeedListener | undefined;

  constructor(
    private readonly vscode: VsCodeApi,
    target: MessageTarget,
  ) {
    target.addEventListener('message', (e) => this.receive(e.data as ExtensionToPanel));
  }

  subscribe(listener: FeedListener): () => void {
    this.feed = listener;
    this.vscode.postMessage({ type: 'ready' });
    return () => {
      if (this.feed === listener) this.feed = undefined;
    };
  }

  readLog(source: LogSource, offset: number | undefined, length: number): Promise<LogRange> {
    return this.request(
      (requestId) => ({
        type: 'requestLogRange',
        requestId,
        source,
        length,
        ...(offset !== undefined ? { offset } : {}),
      }),
      (m) => {
        if (m.type !== 'logRange') return undefined;
        if (!m.range) throw new Error(m.error ?? 'The log could not be read');
        return m.range;
      },
    );
  }

  followLog(source: LogSource, offset: number, sink: FollowSink): () => void {
    const followId = `follow-${++this.nextId}`;
    this.follows.set(followId, sink);
    this.vscode.postMessage({ type: 'followLog', followId, source, offset });
    return () => {
      if (this.follows.delete(followId))
        this.vscode.postMessage({ type: 'stopFollowLog', followId });
    };
  }

  kill(target: KillTarget): Promise<KillResult> {
    return this.request(
      (requestId) => ({ type: 'kill', requestId, target }),
      (m) => (m.type === 'killResult' ? m.result : undefined),
    );
  }

  api(path: string): Promise<unknown> {
    return this.request(
      (requestId) => ({ type: 'requestApi', requestId, path }),
      (m) => {
        if (m.type !== 'apiResult') return undefined;
        if (m.error !== undefined || m.body === undefined)
          throw new Error(m.error ?? 'The master did not answer');
        return JSON.parse(m.body) as unknown;
      },
    );
  }

  workerState(workerId: string | undefined): Promise<WorkerState> {
    if (workerId === undefined) return Promise.reject(new Error('The panel shows a master'));
    return this.request(
      (requestId) => ({ type: 'requestWorkerState', requestId, workerId }),
      (m) => {
        if (m.type !== 'workerState') return undefined;
        if (!m.state) throw new Error(m.error ?? 'The worker did not answer');
        return m.state;
      },
    );
  }

  /** A past run's event log (the agent reads it: backend/agent/pastRunPages.ts). */
  historyApp(appId: string): Promise<HistoryAppInfo> {
    return this.request(
      (requestId) => ({ type: 'requestHistoryApp', requestId, appId }),
      (m) => {
        if (m.type !== 'historyApp') return undefined;
        if (!m.info) throw new Error(m.error ?? 'No event log of the run');
        return m.info;
      },
    );
  }

  private request<T>(
    build: (requestId: number) => PanelToExtension,
    read: (m: ExtensionToPanel) => T | undefined,
  ): Promise<T> {
    const requestId = ++this.nextId;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(requestId, (m) => {
        try {
          const value = read(m);
          if (value === undefined) reject(new Error(`Unexpected answer ${m.type}`));
          else resolve(value);
        } catch (err) {
          reject(err);
        }
      });
      this.vscode.postMessage(build(requestId));
    });
  }

  private receive(m: ExtensionToPanel): void {
    if (typeof m !== 'object' || m === null) return;
    switch (m.type) {
      case 'snapshot':
        this.feed?.snapshot(m.snapshot);
        return;
      case 'stateChanged':
        this.feed?.change(m.event);
        return;
      case 'connection':
        this.feed?.connection(m.connected, m.message);
        return;
      case 'pastRuns':
        if (Array.isArray(m.runs)) this.feed?.pastRuns?.(m.runs);
        return;
      case 'logChunk':
        this.follows.get(m.followId)?.chunk(m.offset, decodeBase64(m.data));
        return;
      case 'logFollowEnded': {
        const sink = this.follows.get(m.followId);
        this.follows.delete(m.followId);
        sink?.ended(m.totalSize, m.reason);
        return;
      }
      case 'logRange':
      case 'killResult':
      case 'apiResult':
      case 'historyApp':
      case 'workerState': {
        const settle = this.pending.get(m.requestId);
        this.pending.delete(m.requestId);
        settle?.(m);
        return;
      }
    }
  }
}
