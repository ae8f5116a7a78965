/**
 * The extension's one view of the agent: the pushed model, the debounced tree refresh, the status
 * bar, and the requests the commands make. Reconnects after an agent restart.
 */
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import {
  Connect,
  type Connection,
  Disconnect,
  type MasterState,
  type PastRun,
  PastRunsChanged,
  RequestStatus,
  StateChanged,
  SubmitProgress,
} from '../backend/agent/protocol.js';
import { UtilizationHistory } from '../backend/shared/utilization.js';
import { type Debounced, debounce } from './tree/debounce.js';
import type { Model } from './tree/model.js';
import type { WickTreeProvider } from './tree/treeView.js';

export class Session implements vscode.Disposable {
  connection: Connection = { kind: 'disconnected' };
  state: MasterState | undefined;
  /** The master the user asked for in this window (`Connect to Master…` overrides the setting). */
  target: string | undefined;
  private wanted = false;
  readonly trees: WickTreeProvider[] = [];
  private readonly refresh: Debounced;
  private readonly statusItem: vscode.StatusBarItem;
  private readonly changed = new vscode.EventEmitter<Model>();
  /** Fires after the debounced refresh of the views. */
  readonly onDidChange = this.changed.event;
  private readonly pushed = new vscode.EventEmitter<Model>();
  /** Fires on every push from the agent, before the debounce. */
  readonly onDidPush = this.pushed.event;
  private readonly submitProgress = new vscode.EventEmitter<{
    outputId: string;
    message: string;
  }>();
  /** Where each submit stands ("Bundling…"), by its output id: the submit's progress. */
  readonly onDidSubmitProgress = this.submitProgress.event;
  /** Agent push time of the last change, for the benchmark. */
  lastPushAt = 0;
  /**
   * Cores and memory in use over the last minutes, recorded on each push as the master's web UI
   * records them, so the dashboard's chart has a history even when it opens late.
   */
  utilization = new UtilizationHistory();
  /** Where the agent keeps the local cluster's runs across windows (the extension's storage). */
  runsDir: string | undefined;
  /** The runs of earlier local clusters of this folder (before a reload or a restart). */
  pastRuns: PastRun[] = [];
  private readonly pastChanged = new vscode.EventEmitter<PastRun[]>();
  /** The agent told the past runs (once a local cluster starts, and when one stops). */
  readonly onDidChangePastRuns = this.pastChanged.event;
  /** The apps with a driver output in this window (set by the wiring; the tree shows a row). */
  outputApps: () => ReadonlySet<string> = () => new Set();

  constructor(readonly client: LanguageClient) {
    const ms = vscode.workspace.getConfiguration('wick').get<number>('tree.debounceMs', 100);
    this.refresh = debounce(() => {
      for (const t of this.trees) t.refresh();
      this.updateStatus();
      this.changed.fire(this.model());
    }, ms);
    this.statusItem = vscode.window.createStatusBarItem(
      'wick.status',
      vscode.StatusBarAlignment.Left,
      10,
    );
    this.statusItem.name = 'Wick';
    this.updateStatus();
    this.statusItem.show();
  }

  /** Resolves once the views have been told of every push so far (a pending refresh has run). */
  settled(): Promise<void> {
    return this.refresh.flushed();
  }

  model(): Model {
    return {
      connection: this.connection,
      now: Date.now(),
      outputs: this.outputApps(),
      pastRuns: this.pastRuns,
      ...(this.state ? { state: this.state } : {}),
    };
  }

  /** Subscribes to the agent's pushes; called on start and after each agent restart. */
  attach(): void {
    this.client.onNotification(SubmitProgress, (p) => this.submitProgress.fire(p));
    this.client.onNotification(PastRunsChanged, (p) => {
      this.pastRuns = Array.isArray(p?.runs) ? p.runs.slice(0, 100) : [];
      this.pastChanged.fire(this.pastRuns);
      this.refresh();
    });
    this.client.onNotification(StateChanged, (p) => {
      this.connection = p.connection;
      if (p.state) {
        // Another master (or a new local cluster) starts its own history.
        if (p.state.url !== this.state?.url) this.utilization = new UtilizationHistory();
        this.utilization.record(p.state, p.at);
      }
      this.state = p.state ?? (p.connection.kind === 'connected' ? this.state : undefined);
      this.lastPushAt = p.at;
      this.pushed.fire(this.model());
      void vscode.commands.executeCommand('setContext', 'wick.connection', p.connection.kind);
      // The Cluster view's menu offers Start or Stop of the local cluster by this, not both.
      void vscode.commands.executeCommand(
        'setContext',
        'wick.localClusterRunning',
        p.connection.kind === 'connected' && p.connection.local,
      );
      this.refresh();
    });
  }

  masterSetting(): string {
    return this.target ?? vscode.workspace.getConfiguration('wick').get<string>('master', 'local');
  }

  /** Connects (starting the local cluster for `local`) unless connected; shows progress. */
  async connect(master = this.masterSetting()): Promise<Connection> {
    this.wanted = true;
    const c = vscode.workspace.getConfiguration('wick');
    const params = {
      master,
      localCluster: {
        workers: c.get<number>('localCluster.workers', 2),
        cores: c.get<number>('localCluster.cores', 2),
        memory: c.get<string>('localCluster.memory', '2g'),
        // The project's own files, readable by its jobs on the local cluster (localClusterConf.ts).
        readOnlyPaths: (vscode.workspace.workspaceFolders ?? [])
          .filter((f) => f.uri.scheme === 'file')
          .map((f) => f.uri.fsPath),
      },
      reverseProxy: c.get<boolean>('ui.reverseProxy', false),
      ...(this.runsDir ? { runsDir: this.runsDir } : {}),
    };
    const conn = await vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Window,
        title:
          master === 'local' ? 'Wick: starting the local cluster' : `Wick: connecting to ${master}`,
      },
      () => this.client.sendRequest(Connect, params),
    );
    this.connection = conn;
    this.refresh();
    return conn;
  }

  async ensureConnected(): Promise<Connection> {
    if (this.connection.kind === 'connected') return this.connection;
    const conn = await this.connect();
    if (conn.kind === 'error') throw new Error(`Cannot reach ${conn.target}: ${conn.message}`);
    return conn;
  }

  /** The agent's own view: connection, pid and memory (the benchmark and tests read it). */
  status() {
    return this.client.sendRequest(RequestStatus, {});
  }

  /** The agent process went away (the client restarts it): say so instead of showing stale state. */
  agentLost(): void {
    this.connection = {
      kind: 'connecting',
      target: 'agent',
      message: 'The Wick agent stopped; restarting it…',
    };
    this.state = undefined;
    this.pushed.fire(this.model());
    this.refresh();
  }

  /** After an agent restart: reconnect if the user had connected. */
  async reconnect(): Promise<void> {
    this.connection = { kind: 'disconnected' };
    this.state = undefined;
    this.refresh();
    if (this.wanted) await this.connect().catch(() => undefined);
  }

  async disconnect(stopLocalCluster: boolean): Promise<void> {
    this.wanted = false;
    this.connection = await this.client.sendRequest(Disconnect, { stopLocalCluster });
    this.state = undefined;
    this.refresh();
  }

  /**
   * The last run from this window that failed, shown in the status bar until the next submit:
   * a failure must be visible where the user glances, not only in a toast that fades.
   */
  private failedRun?: { name: string; message: string };

  /** What the status bar item shows (the in-host tests read it). */
  get statusBar(): { text: string; tooltip: string } {
    const t = this.statusItem.tooltip;
    return { text: this.statusItem.text, tooltip: typeof t === 'string' ? t : (t?.value ?? '') };
  }

  noteRun(failed?: { name: string; message: string }): void {
    this.failedRun = failed;
    this.updateStatus();
  }

  private updateStatus(): void {
    const it = this.statusItem;
    const c = this.connection;
    if (c.kind === 'connected' && this.state) {
      const alive = this.state.workers.filter((w) => w.state === 'ALIVE');
      const cores = alive.reduce((a, w) => a + w.cores, 0);
      const used = alive.reduce((a, w) => a + w.coresUsed, 0);
      const failed = this.failedRun;
      it.text = `$(server) Wick ${this.state.status} · ${alive.length} workers · ${used}/${cores} cores${failed ? ` · $(error) ${failed.name} FAILED` : ''}`;
      it.tooltip = `Master ${this.state.url} (${this.state.status})\n${alive.length} of ${this.state.workers.length} workers alive, ${used} of ${cores} cores used${failed ? `\n\nLast run: ${failed.message}` : ''}\nClick to open the dashboard`;
      it.command = 'wick.openDashboard';
      it.backgroundColor = undefined;
    } else if (c.kind === 'connecting') {
      it.text = '$(loading~spin) Wick: starting…';
      it.tooltip = c.message;
      it.command = undefined;
    } else if (c.kind === 'error') {
      it.text = '$(error) Wick: unreachable';
      it.tooltip = `${c.target}: ${c.message}\nClick to retry`;
      it.command = 'wick.refresh';
      it.backgroundColor = new vscode.ThemeColor('statusBarItem.errorBackground');
    } else {
      it.text = '$(debug-disconnect) Wick';
      it.tooltip = 'Not connected to a cluster. Click to start the local cluster.';
      it.command = 'wick.startLocalCluster';
      it.backgroundColor = undefined;
    }
  }

  dispose(): void {
    this.refresh.dispose();
    this.statusItem.dispose();
    this.changed.dispose();
    this.pushed.dispose();
    this.submitProgress.dispose();
    this.pastChanged.dispose();
  }
}
