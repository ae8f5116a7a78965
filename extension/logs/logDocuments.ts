/**
 * Logs as real, read-only documents (`wick-log:` URIs): opening one reads the last
 * `wick.logs.initialBytes` of the file from its worker through the agent, then follows it; each
 * pushed chunk lands in a LogBuffer and the document changes. Closing the document stops the
 * follow. Search, folding, minimap and word wrap are the editor's own.
 */
import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import {
  FollowLog,
  LogChunk,
  LogFollowEnded,
  type LogSource,
  type LogStream,
  RequestLogRange,
  StopFollowLog,
} from '../../backend/agent/protocol.js';
import { LogBuffer } from './logBuffer.js';

export const scheme = 'wick-log';

interface Session {
  uri: vscode.Uri;
  buffer: LogBuffer;
  followId?: string;
  ready: Promise<void>;
}

/**
 * The editor's tab shows a URI's last path segment: one segment that names the whole source
 * (`app-…∕0 stdout`, with U+2215 DIVISION SLASH, since a "/" would start a new segment), not a
 * bare `stdout` that reads the same for every executor. What the document is comes from the query.
 */
/**
 * A log's address; its path is the tab's title: the app's name first (as the tree and the
 * notifications call it), then the ids. The query alone says which log it is.
 */
export function logUri(source: LogSource, stream: LogStream, appName?: string): vscode.Uri {
  const ids = 'driverId' in source ? source.driverId : `${source.appId}\u2215${source.execId}`;
  // A `/` in a name would make a folder of the path: the tab shows the look-alike ∕.
  const name = appName?.trim().slice(0, 80).replaceAll('/', '\u2215');
  const path = `/${name ? `${name} · ` : ''}${ids} ${stream}`;
  return vscode.Uri.from({ scheme, path, query: JSON.stringify({ source, stream }) });
}

export class LogDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  private readonly sessions = new Map<string, Session>();
  private readonly byFollow = new Map<string, Session>();
  private readonly disposables: vscode.Disposable[] = [];
  /** Chunks received, and those for no follow of ours (shown by describe(), for diagnosis). */
  private readonly counts = { chunks: 0, strays: 0 };

  constructor(private readonly client: () => LanguageClient) {
    this.disposables.push(
      vscode.workspace.onDidCloseTextDocument((d) => {
        // A language change (the "log" mode set on opening) is announced as a close and an open
        // of a document that stays open: only a document really gone stops its follow.
        if (d.uri.scheme !== scheme || vscode.workspace.textDocuments.includes(d)) return;
        this.close(d.uri.toString());
      }),
      vscode.workspace.onDidOpenTextDocument((d) => {
        // VS Code drops a change fired before its extension host has the document (between
        // provideTextDocumentContent's answer and the open): a follow that ends right after the
        // log opens would never show its end. Firing again once it is open catches up; a
        // document already up to date costs one comparison.
        if (d.uri.scheme === scheme && this.sessions.has(d.uri.toString()))
          this.changed.fire(d.uri);
      }),
    );
  }

  /** Hooks the agent's notifications; called again after an agent restart. */
  attach(
    client: LanguageClient,
    relay?: {
      chunk(id: string, o: number, d: string): boolean;
      ended(id: string, t: number, r: string): boolean;
    },
  ): void {
    this.disposables.push(
      client.onNotification(LogChunk, (c) => {
        if (relay?.chunk(c.followId, c.offset, c.data)) return;
        const s = this.byFollow.get(c.followId);
        if (s) this.counts.chunks++;
        else this.counts.strays++;
        if (s?.buffer.append(c.offset, Buffer.from(c.data, 'base64'))) this.changed.fire(s.uri);
      }),
      client.onNotification(LogFollowEnded, (e) => {
        if (relay?.ended(e.followId, e.totalSize, e.reason)) return;
        const s = this.byFollow.get(e.followId);
        if (!s) return;
        this.byFollow.delete(e.followId);
        s.followId = undefined;
        s.buffer.end_(e.reason);
        this.changed.fire(s.uri);
      }),
    );
  }

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    let s = this.sessions.get(uri.toString());
    if (!s) {
      const session: Session = { uri, buffer: new LogBuffer(), ready: Promise.resolve() };
      session.ready = this.open(session);
      this.sessions.set(uri.toString(), session);
      s = session;
    }
    await s.ready;
    return s.buffer.text();
  }

  private async open(s: Session): Promise<void> {
    const { source, stream } = JSON.parse(s.uri.query) as { source: LogSource; stream: LogStream };
    const length = vscode.workspace
      .getConfiguration('wick')
      .get<number>('logs.initialBytes', 102400);
    try {
      const r = await this.client().sendRequest(RequestLogRange, { source, stream, length });
      s.buffer.reset(r.offset, Buffer.from(r.data, 'base64'));
      const followId = randomBytes(8).toString('hex');
      s.followId = followId;
      this.byFollow.set(followId, s);
      await this.client().sendRequest(FollowLog, {
        followId,
        source,
        stream,
        offset: s.buffer.end,
      });
    } catch (err) {
      s.buffer.end_(`Cannot read this log: ${(err as Error).message}`);
    }
  }

  /** Shows the `wick.logs.initialBytes` before what the document has. */
  async loadEarlier(uri: vscode.Uri): Promise<void> {
    const s = this.sessions.get(uri.toString());
    if (!s || s.buffer.start === 0) return;
    const { source, stream } = JSON.parse(uri.query) as { source: LogSource; stream: LogStream };
    const want = vscode.workspace.getConfiguration('wick').get<number>('logs.initialBytes', 102400);
    const offset = Math.max(0, s.buffer.start - want);
    const r = await this.client().sendRequest(RequestLogRange, {
      source,
      stream,
      offset,
      length: s.buffer.start - offset,
    });
    if (s.buffer.prepend(r.offset, Buffer.from(r.data, 'base64'))) this.changed.fire(uri);
  }

  /** What a log document holds and whether it still follows, for tests and bug reports. */
  describe(uri: vscode.Uri): string {
    const s = this.sessions.get(uri.toString());
    if (!s) return `not open (${this.sessions.size} open)`;
    const b = s.buffer;
    return `bytes [${b.start}, ${b.end}), ${s.followId ? `following as ${s.followId}` : `ended: ${b.ended}`}; chunks ${this.counts.chunks}, strays ${this.counts.strays}`;
  }

  private close(key: string): void {
    const s = this.sessions.get(key);
    if (!s) return;
    this.sessions.delete(key);
    if (s.followId) {
      this.byFollow.delete(s.followId);
      void this.client().sendNotification(StopFollowLog, { followId: s.followId });
    }
  }

  dispose(): void {
    for (const key of [...this.sessions.keys()]) this.close(key);
    for (const d of this.disposables) d.dispose();
    this.changed.dispose();
  }
}
