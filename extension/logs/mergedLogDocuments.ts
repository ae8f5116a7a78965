/**
 * "Show Merged Log": an application's driver and executor logs as one read-only document
 * (`wick-merged:` URIs), each line tagged with its source, in the order the lines reached the
 * extension (mergedLog.ts says why that order). Opening it reads each source's tail and follows
 * it; executors that start later join as they appear in the pushed state; closing it stops every
 * follow. The driver is a source when its id is known: a cluster-mode submit from this window
 * (a client-mode driver runs beside the agent, not on a worker, and has no worker log).
 */
import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import {
  FollowLog,
  type LogSource,
  type LogStream,
  type MasterState,
  RequestLogRange,
  StopFollowLog,
} from '../../backend/agent/protocol.js';
import type { ExtensionToPanel } from '../../webview/protocol.js';
import { driverOf } from './knownDrivers.js';
import { MergedLog, sourceTag } from './mergedLog.js';

export const mergedScheme = 'wick-merged';

/** Where the agent's follow notifications for our follow ids come (the dashboard's LogRelay). */
export interface FollowRoutes {
  add(id: string, fn: (m: ExtensionToPanel) => void): void;
  remove(id: string): void;
}

interface View {
  uri: vscode.Uri;
  appId: string;
  log: MergedLog;
  /** Source keys already added (`exec 0`, `driver`), so a source is read once. */
  sources: Set<string>;
  follows: Set<string>;
  ready: Promise<void>;
}

export function mergedLogUri(appId: string, driverId?: string): vscode.Uri {
  return vscode.Uri.from({
    scheme: mergedScheme,
    path: `/${appId} merged`,
    query: JSON.stringify({ appId, ...(driverId ? { driverId } : {}) }),
  });
}

export class MergedLogDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  private readonly views = new Map<string, View>();
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly client: () => LanguageClient,
    private readonly routes: FollowRoutes,
    private readonly state: () => MasterState | undefined,
    onState: vscode.Event<unknown>,
  ) {
    this.disposables.push(
      vscode.workspace.onDidCloseTextDocument((d) => {
        if (d.uri.scheme !== mergedScheme || vscode.workspace.textDocuments.includes(d)) return;
        this.close(d.uri.toString());
      }),
      vscode.workspace.onDidOpenTextDocument((d) => {
        if (d.uri.scheme === mergedScheme && this.views.has(d.uri.toString()))
          this.changed.fire(d.uri);
      }),
      // Executors that start after the view opened join it.
      onState(() => {
        for (const v of this.views.values()) void this.addExecutors(v);
      }),
    );
  }

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    let v = this.views.get(uri.toString());
    if (!v) {
      const { appId, driverId } = parseQuery(uri.query);
      const view: View = {
        uri,
        appId,
        log: new MergedLog(),
        sources: new Set(),
        follows: new Set(),
        ready: Promise.resolve(),
      };
      this.views.set(uri.toString(), view);
      view.ready = (async () => {
        if (driverId) {
          await this.addSource(view, { driverId }, 'stdout');
          await this.addSource(view, { driverId }, 'stderr');
        }
        await this.addExecutors(view);
      })();
      v = view;
    }
    await v.ready;
    const head = `[Logs of ${v.appId}, merged: lines in the order they reached VS Code; what was written before this view opened comes first, source by source]\n`;
    return head + v.log.text();
  }

  /** How many lines the view of `uri` holds (tests). */
  lineCount(uri: vscode.Uri): number {
    return this.views.get(uri.toString())?.log.lineCount ?? 0;
  }

  private async addExecutors(v: View): Promise<void> {
    const s = this.state();
    const app = s && [...s.activeApps, ...s.completedApps].find((a) => a.id === v.appId);
    if (!app) return;
    const execs = [...app.executors, ...app.removedExecutors].sort((a, b) => a.id - b.id);
    for (const e of execs)
      for (const stream of ['stdout', 'stderr'] as const)
        await this.addSource(v, { appId: e.appId, execId: e.id }, stream);
  }

  private async addSource(v: View, source: LogSource, stream: LogStream): Promise<void> {
    const tag = sourceTag(source, stream);
    if (v.sources.has(tag)) return;
    v.sources.add(tag);
    const length = vscode.workspace
      .getConfiguration('wick')
      .get<number>('logs.initialBytes', 102400);
    try {
      const r = await this.client().sendRequest(RequestLogRange, { source, stream, length });
      const backlog = Buffer.from(r.data, 'base64');
      v.log.add(tag, backlog);
      const followId = `merged-${randomBytes(6).toString('hex')}`;
      let end = r.offset + backlog.length;
      v.follows.add(followId);
      this.routes.add(followId, (m) => {
        if (m.type === 'logChunk') {
          const bytes = Buffer.from(m.data, 'base64');
          // A chunk that overlaps what the view has (the follow starts where the read ended).
          const skip = Math.max(0, end - m.offset);
          if (skip >= bytes.length) return;
          end = m.offset + bytes.length;
          if (v.log.add(tag, bytes.subarray(skip))) this.changed.fire(v.uri);
        } else if (m.type === 'logFollowEnded') {
          v.follows.delete(followId);
          this.routes.remove(followId);
          if (v.log.end(tag)) this.changed.fire(v.uri);
        }
      });
      await this.client().sendRequest(FollowLog, { followId, source, stream, offset: end });
      this.changed.fire(v.uri);
    } catch (err) {
      v.log.end(tag, `cannot read this log: ${(err as Error).message}`);
      this.changed.fire(v.uri);
    }
  }

  private close(key: string): void {
    const v = this.views.get(key);
    if (!v) return;
    this.views.delete(key);
    for (const id of v.follows) {
      this.routes.remove(id);
      void this.client().sendNotification(StopFollowLog, { followId: id });
    }
  }

  dispose(): void {
    for (const key of [...this.views.keys()]) this.close(key);
    for (const d of this.disposables) d.dispose();
    this.changed.dispose();
  }
}

function parseQuery(q: string): { appId: string; driverId?: string } {
  let raw: unknown;
  try {
    raw = JSON.parse(q);
  } catch {
    raw = undefined;
  }
  const r = (raw ?? {}) as { appId?: unknown; driverId?: unknown };
  if (typeof r.appId !== 'string' || !/^app-[\w.-]{1,200}$/.test(r.appId))
    throw new Error(`Invalid merged log address ${JSON.stringify(q)}: expected an application id`);
  const driverId =
    typeof r.driverId === 'string' && /^driver-[\w.-]{1,200}$/.test(r.driverId)
      ? r.driverId
      : undefined;
  return { appId: r.appId, ...(driverId ? { driverId } : {}) };
}

/**
 * The provider, the `tail -f` scrolling of log documents, and "Wick: Show Merged Log" on an
 * application (a tree item, or `{ appId, driverId }` as a submit returns it).
 */
export function registerMergedLog(d: {
  client: () => LanguageClient;
  routes: FollowRoutes;
  state: () => MasterState | undefined;
  onState: vscode.Event<unknown>;
  showError: (message: string) => unknown;
}): { docs: MergedLogDocuments; disposables: vscode.Disposable[] } {
  const docs = new MergedLogDocuments(d.client, d.routes, d.state, d.onState);
  const show = async (arg?: {
    kind?: string;
    app?: { id: string };
    appId?: string;
    driverId?: string;
  }) => {
    const appId = arg?.kind === 'app' ? arg.app?.id : arg?.appId;
    if (!appId) throw new Error('Select an application to show its merged log');
    const driverId = arg?.driverId ?? driverOf(appId);
    const doc = await vscode.workspace.openTextDocument(mergedLogUri(appId, driverId));
    await vscode.languages.setTextDocumentLanguage(doc, 'log');
    return vscode.window.showTextDocument(doc, { preview: false });
  };
  return {
    docs,
    disposables: [
      docs,
      vscode.workspace.registerTextDocumentContentProvider(mergedScheme, docs),
      vscode.commands.registerCommand('wick.showMergedLog', async (arg?: never) => {
        try {
          return await show(arg);
        } catch (err) {
          d.showError(`Wick: ${(err as Error).message}`);
          return undefined;
        }
      }),
    ],
  };
}
