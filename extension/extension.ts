import * as vscode from 'vscode';
import { State } from 'vscode-languageclient/node';
import { RequestPastRunFailedTask } from '../backend/agent/protocol.js';
import { createAgentClient } from './agent/agentClient.js';
import { registerCommands } from './commands.js';
import { registerDashboardCommands } from './dashboard/dashboardCommands.js';
import { DashboardPanel, LogRelay } from './dashboard/dashboardPanel.js';
import { pastRunOfRoute } from './dashboard/dashboardRoute.js';
import { registerDebugFailedTask, userFiles } from './debug/debugFailedTask.js';
import { registerDebug } from './debug/debugJob.js';
import { windowHost } from './host.js';
import { FollowScroll } from './logs/followScroll.js';
import { LogDocuments, scheme } from './logs/logDocuments.js';
import { mergedScheme, registerMergedLog } from './logs/mergedLogDocuments.js';
import { DriverOutputs, outputScheme } from './output/driverOutputs.js';
import { FailureDocuments, failureScheme } from './output/failureDocuments.js';
import { RunReports } from './output/runReports.js';
import { registerProject } from './project/newJob.js';
import { Session } from './session.js';
import { registerRunButton } from './submit/runButton.js';
import { AppFilterControl } from './tree/appFilter.js';
import { registerEndedRunsNotice } from './tree/endedRuns.js';
import type { Model, Node } from './tree/nodes/node.js';
import { SubmittedSelection } from './tree/revealSubmitted.js';
import { registerTreeGlance } from './tree/treeGlance.js';
import { WickTreeProvider } from './tree/treeView.js';
import { registerClusterStep } from './walkthrough/clusterStep.js';

/**
 * Activation wiring only: the agent client (the one backend process), the session that holds its
 * pushed state, the two views, the log documents and the commands. Every registration goes into
 * context.subscriptions. The returned API is for the in-host tests.
 */
export async function activate(context: vscode.ExtensionContext) {
  const t0 = Date.now();
  const output = vscode.window.createOutputChannel('Wick', { log: true });
  const client = createAgentClient(context, output);
  const session = new Session(client);
  // The local cluster's runs (records, driver output, executors' logs) outlive the window here.
  session.runsDir = (context.storageUri ?? context.globalStorageUri).fsPath;
  const failures = new FailureDocuments();
  const logs = new LogDocuments(() => client);
  session.attach();
  const relay = new LogRelay();
  logs.attach(client, relay);
  const outputs = new DriverOutputs();
  outputs.attach(client);
  session.outputApps = () => outputs.appIds();
  let starts = 0;
  // After a crash the client restarts the agent; once it runs again, reconnect: the tree recovers.
  client.onDidChangeState((e) => {
    if (e.newState === State.Stopped && starts > 0) session.agentLost();
    if (e.newState === State.Running && starts++ > 0) void session.reconnect();
  });
  const clusterTree = new WickTreeProvider('cluster', () => session.model());
  // The Applications view reads the model through its filter (state filter, Clear Completed).
  const appsTree = new WickTreeProvider(
    'applications',
    (): Model => ({
      ...session.model(),
      filter: appFilter.current,
    }),
  );
  session.trees.push(clusterTree, appsTree);
  const clusterView = vscode.window.createTreeView<Node>('wick.cluster', {
    treeDataProvider: clusterTree,
    showCollapseAll: true,
  });
  const appsView = vscode.window.createTreeView<Node>('wick.applications', {
    treeDataProvider: appsTree,
    canSelectMany: true,
    showCollapseAll: true,
  });
  const s = session;
  const host = windowHost();
  const reports = new RunReports(outputs, session, host, context.extensionPath);
  const appFilter = new AppFilterControl(context.workspaceState, session, appsView);
  const panelDeps = { context, session: s, relay, host };
  const merged = registerMergedLog({
    client: () => client,
    routes: relay,
    state: () => s.state,
    onState: s.onDidChange,
    showError: (m) => host.showErrorMessage(m),
    outputs,
  });
  const follow = new FollowScroll([scheme, mergedScheme], (m) => output.trace(m));
  const openDashboard = (hash?: string) => {
    // A past run's pages are read from its event log: no master needed.
    if (s.connection.kind !== 'connected' && !pastRunOfRoute(hash, s.pastRuns))
      throw new Error('Not connected to a master: start the local cluster or connect first');
    return DashboardPanel.show(panelDeps, hash);
  };
  context.subscriptions.push(
    output,
    session,
    logs,
    clusterTree,
    appsTree,
    clusterView,
    appsView,
    vscode.workspace.registerTextDocumentContentProvider(scheme, logs),
    outputs,
    reports,
    vscode.workspace.registerTextDocumentContentProvider(outputScheme, outputs),
    vscode.workspace.registerTextDocumentContentProvider(failureScheme, failures),
    ...registerCommands({
      session,
      logs,
      openDashboard,
      memento: context.workspaceState,
      host,
      selection: new SubmittedSelection(session, appsTree, appsView),
      version: (context.extension.packageJSON as { version: string }).version,
      outputs,
      reports,
      failures,
    }),
    ...registerDashboardCommands({ session, openDashboard, host }),
    ...registerClusterStep(session),
    registerEndedRunsNotice(session, context.workspaceState, host),
    follow,
    ...registerTreeGlance({
      session,
      host,
      filter: appFilter,
      env: context.environmentVariableCollection,
    }),
    ...merged.disposables,
    vscode.window.registerWebviewPanelSerializer(DashboardPanel.viewType, {
      deserializeWebviewPanel: async (panel, state) =>
        void DashboardPanel.revive(panel, panelDeps, state),
    }),
    ...registerProject({
      host,
      memento: context.workspaceState,
      shippedTypes: vscode.Uri.joinPath(context.extensionUri, 'dist', 'types').fsPath,
    }),
    ...registerRunButton(),
    ...registerDebugFailedTask(outputs, {
      failedTask: (appId) => client.sendRequest(RequestPastRunFailedTask, { appId }),
      accept: userFiles(context.extensionPath),
    }),
    ...registerDebug({
      session,
      wick: context.asAbsolutePath('dist/wick.cjs'),
      dist: context.asAbsolutePath('dist'),
    }),
    { dispose: () => void client.stop() },
  );
  await client.start();
  // First use: the Wick view opened (or a Wick command run) connects, starting the local cluster.
  const firstUse = () => {
    if (s.connection.kind === 'disconnected' && (clusterView.visible || appsView.visible))
      void s
        .connect()
        .catch((err) => output.appendLine(`Connect failed: ${(err as Error).message}`));
  };
  context.subscriptions.push(
    clusterView.onDidChangeVisibility(firstUse),
    appsView.onDidChangeVisibility(firstUse),
  );
  if (vscode.workspace.getConfiguration('wick').get<boolean>('autoStart', true)) firstUse();
  const activationMs = Date.now() - t0;
  output.appendLine(`Wick activated in ${activationMs} ms`);
  return {
    session,
    client,
    logs,
    merged: merged.docs,
    host,
    outputs,
    reports,
    failures,
    clusterTree,
    appsTree,
    clusterView,
    appsView,
    follow,
    activationMs,
  };
}

export function deactivate(): void {}
