/**
 * The dashboard (webview/ bundle) in a panel, fed through its VsCodeDataSource over postMessage
 * (webview/protocol.ts). Strict CSP with a nonce (dashboardHtml), localResourceRoots limited to
 * dist/, theme from VS Code's CSS variables. The panel owns its disposables and stops the log
 * follows it started when it closes. What the panel sends is validated: its script is the less
 * trusted side.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Value } from '@sinclair/typebox/value';
import * as vscode from 'vscode';
import {
  FollowLog,
  Kill,
  type MasterState,
  RequestAppStatusApiOf,
  RequestLogRange,
  RequestPastRunLog,
  RequestWorkerStateOf,
  StopFollowLog,
} from '../../backend/agent/protocol.js';
import { dashboardHtml } from '../../backend/shared/dashboardPage.js';
import {
  type ExtensionToPanel,
  type KillTarget,
  type LogSource,
  PanelToExtension,
} from '../../webview/protocol.js';
import type { Host } from '../host.js';
import type { Session } from '../session.js';
import { appWaitingReason } from '../submit/waitingReasons.js';

/**
 * The page's route, also kept in a file of the extension's storage: VS Code saves a webview's
 * state (and mementos) with the window's storage when the window closes, which a browser reload
 * of a web workbench (code-server) can cut short; a file the extension host writes is there.
 */
/** The state with each waiting app's reason in VS Code's words (waitingReasons.ts). */
function inVsCodeWords(state: MasterState): MasterState {
  if (!state.activeApps.some((a) => a.state === 'WAITING' && a.waitingReason)) return state;
  return {
    ...state,
    activeApps: state.activeApps.map((a) => {
      const reason = appWaitingReason(a);
      return reason && a.waitingReason ? { ...a, waitingReason: reason } : a;
    }),
  };
}

function routeFile(context: vscode.ExtensionContext): string | undefined {
  const dir = context.storageUri ?? context.globalStorageUri;
  return dir ? join(dir.fsPath, 'dashboard-route.json') : undefined;
}

function saveRoute(context: vscode.ExtensionContext, hash: string): void {
  const file = routeFile(context);
  if (!file) return;
  try {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, JSON.stringify({ route: hash }));
  } catch {
    // Only a convenience: the webview's own state is the first place looked at.
  }
}

function savedRoute(context: vscode.ExtensionContext): unknown {
  const file = routeFile(context);
  try {
    return file ? (JSON.parse(readFileSync(file, 'utf8')) as { route?: unknown }).route : undefined;
  } catch {
    return undefined;
  }
}

export interface PanelDeps {
  context: vscode.ExtensionContext;
  session: Session;
  relay: LogRelay;
  host: Host;
}

export class DashboardPanel implements vscode.Disposable {
  private static current: DashboardPanel | undefined;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly follows = new Set<string>();
  private readonly exchanged = new vscode.EventEmitter<void>();
  /** For the in-host tests: messages the webview's script sent, and state posts it accepted. */
  readonly stats = { received: 0, ready: 0, delivered: 0 };
  readonly onDidExchange = this.exchanged.event;

  static readonly viewType = 'wick.dashboard';

  /** The panel (made or revealed), on `hash` when given (`#/app/ID`: Open in Dashboard). */
  static show(deps: PanelDeps, hash?: string): DashboardPanel {
    const current = DashboardPanel.current;
    if (current) {
      current.panel.reveal();
      if (hash) current.navigate(hash);
      return current;
    }
    const panel = vscode.window.createWebviewPanel(
      DashboardPanel.viewType,
      'Wick Dashboard',
      vscode.ViewColumn.Active,
      panelOptions(deps.context),
    );
    DashboardPanel.current = new DashboardPanel(panel, deps, hash);
    return DashboardPanel.current;
  }

  /**
   * A panel VS Code kept over a reload (the WebviewPanelSerializer): the same page again; it finds
   * its route in the webview's saved state (webview/navigation.ts).
   */
  static revive(panel: vscode.WebviewPanel, deps: PanelDeps, state?: unknown): DashboardPanel {
    DashboardPanel.current?.dispose();
    panel.webview.options = panelOptions(deps.context);
    // The page's saved route, as VS Code kept it: sent once the new page is ready, in case its
    // own getState() comes back empty (a revived webview is a new page).
    const route = (state as { route?: unknown } | undefined)?.route ?? savedRoute(deps.context);
    const hash =
      typeof route === 'string' && route.startsWith('#') && route.length <= 2048
        ? route
        : undefined;
    DashboardPanel.current = new DashboardPanel(panel, deps, hash);
    return DashboardPanel.current;
  }

  /** The open panel, if any (Open in Dashboard, the tests). */
  static get open(): DashboardPanel | undefined {
    return DashboardPanel.current;
  }

  private readonly session: Session;
  private readonly relay: LogRelay;
  private readonly host: Host;
  private readonly context: vscode.ExtensionContext;

  private constructor(
    readonly panel: vscode.WebviewPanel,
    deps: PanelDeps,
    private pendingHash?: string,
  ) {
    const { session } = deps;
    this.session = session;
    this.relay = deps.relay;
    this.host = deps.host;
    this.context = deps.context;
    const dist = vscode.Uri.joinPath(deps.context.extensionUri, 'dist');
    const w = panel.webview;
    w.html = dashboardHtml({
      nonce: randomBytes(16).toString('base64'),
      scriptUri: w.asWebviewUri(vscode.Uri.joinPath(dist, 'webview.js')).toString(),
      styleUri: w.asWebviewUri(vscode.Uri.joinPath(dist, 'webview.css')).toString(),
      config: { mode: 'master', host: 'vscode' },
      title: 'Wick Dashboard',
      cspSource: w.cspSource,
    });
    this.disposables.push(
      w.onDidReceiveMessage((m) => void this.receive(m)),
      panel.onDidDispose(() => this.dispose()),
      session.onDidChange(() => this.sendState()),
      session.onDidChangePastRuns(() => this.sendPastRuns()),
    );
  }

  /** The route the page last said it shows (`#/workers`), once it has loaded. */
  route: string | undefined;

  /** Moves the page to `hash`; a page still loading goes there once it is ready. */
  navigate(hash: string): void {
    if (this.stats.ready === 0) this.pendingHash = hash;
    else this.post({ type: 'navigate', hash });
  }

  private post(m: ExtensionToPanel): void {
    void this.panel.webview.postMessage(m).then((ok) => {
      if (!ok) return;
      this.stats.delivered++;
      this.exchanged.fire();
    });
  }

  private sendState(): void {
    const c = this.session.connection;
    if (c.kind !== 'connected' || !this.session.state) {
      this.post({
        type: 'connection',
        connected: false,
        message: c.kind === 'error' ? c.message : 'Not connected',
      });
      return;
    }
    this.post({
      type: 'snapshot',
      snapshot: {
        // The panel names what a VS Code user changes, as the notifications do.
        state: inVsCodeWords(this.session.state),
        utilization: [...this.session.utilization.samples],
        capabilities: { killEnabled: true },
      },
    });
  }

  /** The runs of earlier local clusters, whose pages the agent reads from their event logs. */
  private sendPastRuns(): void {
    this.post({
      type: 'pastRuns',
      runs: this.session.pastRuns.map((r) => ({ appId: r.appId, name: r.name, state: r.state })),
    });
  }

  private async receive(raw: unknown): Promise<void> {
    if (!Value.Check(PanelToExtension, raw)) return;
    const m = raw as PanelToExtension;
    const client = this.session.client;
    this.stats.received++;
    if (m.type === 'ready') this.stats.ready++;
    this.exchanged.fire();
    switch (m.type) {
      case 'ready':
        if (this.pendingHash) this.post({ type: 'navigate', hash: this.pendingHash });
        this.pendingHash = undefined;
        // The past runs first: a past run's page needs no master (its event log is the agent's).
        this.sendPastRuns();
        return this.sendState();
      case 'route':
        this.route = m.hash;
        saveRoute(this.context, m.hash);
        this.exchanged.fire();
        return;
      case 'requestLogRange':
        try {
          const r = await client.sendRequest(RequestLogRange, {
            source: toSource(m.source),
            stream: m.source.logType,
            length: m.length,
            ...(m.offset !== undefined ? { offset: m.offset } : {}),
          });
          const length = Buffer.from(r.data, 'base64').length;
          return this.post({ type: 'logRange', requestId: m.requestId, range: { ...r, length } });
        } catch (err) {
          return this.post({
            type: 'logRange',
            requestId: m.requestId,
            error: (err as Error).message,
          });
        }
      case 'followLog':
        this.follows.add(m.followId);
        this.relay.add(m.followId, (msg) => this.post(msg));
        await client
          .sendRequest(FollowLog, {
            followId: m.followId,
            source: toSource(m.source),
            stream: m.source.logType,
            offset: m.offset,
          })
          .catch((err: Error) =>
            this.post({
              type: 'logFollowEnded',
              followId: m.followId,
              totalSize: 0,
              reason: err.message,
            }),
          );
        return;
      case 'stopFollowLog':
        return this.stopFollow(m.followId);
      case 'kill': {
        const ok = await this.host.showWarningMessage(
          killQuestion(m.target, this.session),
          { modal: true, detail: killDetail(m.target) },
          'Kill',
        );
        if (ok !== 'Kill')
          return this.post({
            type: 'killResult',
            requestId: m.requestId,
            result: { success: false, message: 'Cancelled', cancelled: true },
          });
        const result = await client
          .sendRequest(Kill, { id: m.target.id })
          .catch((err: Error) => ({ success: false, message: err.message }));
        if (!result.success) void this.host.showErrorMessage(`Wick: ${result.message}`);
        return this.post({ type: 'killResult', requestId: m.requestId, result });
      }
      case 'requestApi':
        try {
          const r = await client.sendRequest(RequestAppStatusApiOf, { path: m.path });
          if (r.status !== 200) {
            const said = (JSON.parse(r.body) as { error?: unknown }).error;
            throw new Error(typeof said === 'string' ? said : `/api/v1 answered ${r.status}`);
          }
          return this.post({ type: 'apiResult', requestId: m.requestId, body: r.body });
        } catch (err) {
          return this.post({
            type: 'apiResult',
            requestId: m.requestId,
            error: (err as Error).message,
          });
        }
      case 'requestHistoryApp':
        try {
          const r = await client.sendRequest(RequestPastRunLog, { appId: m.appId });
          if (!r.log) throw new Error(r.reason ?? `No event log of ${m.appId}`);
          return this.post({ type: 'historyApp', requestId: m.requestId, info: r.log });
        } catch (err) {
          return this.post({
            type: 'historyApp',
            requestId: m.requestId,
            error: (err as Error).message,
          });
        }
      case 'requestWorkerState':
        try {
          const state = await client.sendRequest(RequestWorkerStateOf, { workerId: m.workerId });
          return this.post({ type: 'workerState', requestId: m.requestId, state });
        } catch (err) {
          return this.post({
            type: 'workerState',
            requestId: m.requestId,
            error: (err as Error).message,
          });
        }
    }
  }

  private stopFollow(followId: string): void {
    if (!this.follows.delete(followId)) return;
    this.relay.remove(followId);
    void this.session.client.sendNotification(StopFollowLog, { followId });
  }

  dispose(): void {
    DashboardPanel.current = undefined;
    for (const id of [...this.follows]) this.stopFollow(id);
    for (const d of this.disposables) d.dispose();
    this.exchanged.dispose();
    this.panel.dispose();
  }
}

function panelOptions(
  context: vscode.ExtensionContext,
): vscode.WebviewPanelOptions & vscode.WebviewOptions {
  return {
    enableScripts: true,
    // Hidden, the page is thrown away; it comes back where it was from its saved state.
    retainContextWhenHidden: false,
    localResourceRoots: [vscode.Uri.joinPath(context.extensionUri, 'dist')],
  };
}

/** The one confirmation of a kill from the panel: VS Code's modal, naming what it kills. */
export function killQuestion(target: KillTarget, session: Session): string {
  const s = session.state;
  if (target.kind === 'app') {
    const app = s && [...s.activeApps, ...s.completedApps].find((a) => a.id === target.id);
    return app ? `Kill application "${app.name}" (${app.id})?` : `Kill application ${target.id}?`;
  }
  const d = s && [...s.activeDrivers, ...s.completedDrivers].find((x) => x.id === target.id);
  const file = d?.appPath.split('/').pop();
  return file ? `Kill driver ${target.id} (${file})?` : `Kill driver ${target.id}?`;
}

function killDetail(target: KillTarget): string {
  return target.kind === 'app'
    ? 'Its executors are killed and the application ends as KILLED.'
    : 'Its process is killed on its worker and the driver ends as KILLED.';
}

function toSource(s: LogSource): { appId: string; execId: number } | { driverId: string } {
  if (s.driverId) return { driverId: s.driverId };
  return { appId: s.appId ?? '', execId: s.executorId ?? 0 };
}

/** Routes the agent's LogChunk/LogFollowEnded for follows a panel started (others go to documents). */
export class LogRelay {
  private readonly routes = new Map<string, (m: ExtensionToPanel) => void>();
  add(id: string, fn: (m: ExtensionToPanel) => void): void {
    this.routes.set(id, fn);
  }
  remove(id: string): void {
    this.routes.delete(id);
  }
  chunk(followId: string, offset: number, data: string): boolean {
    const r = this.routes.get(followId);
    r?.({ type: 'logChunk', followId, offset, data });
    return r !== undefined;
  }
  ended(followId: string, totalSize: number, reason: string): boolean {
    const r = this.routes.get(followId);
    this.routes.delete(followId);
    r?.({ type: 'logFollowEnded', followId, totalSize, reason });
    return r !== undefined;
  }
}
