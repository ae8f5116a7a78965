/** Every Wick command; each failure becomes a clear notification, never a silent no-op. */
import { basename } from 'node:path';
import * as vscode from 'vscode';
import {
  CheckApplication,
  Kill,
  type LogSource,
  type MasterState,
  SubmitApplication,
  type SubmitParams,
} from '../backend/agent/protocol.js';
import type { Host } from './host.js';
import { rememberDriver } from './logs/knownDrivers.js';
import type { LogDocuments } from './logs/logDocuments.js';
import { logUri } from './logs/logDocuments.js';
import { type Submitted, submittedLogSource } from './logs/submittedLog.js';
import type { DriverOutputs, DriverRun } from './output/driverOutputs.js';
import type { FailureDocuments } from './output/failureDocuments.js';
import { openOutputWhen, type RunReports } from './output/runReports.js';
import { showDriverOutput } from './output/showDriverOutput.js';
import { lastNewJob } from './project/newJob.js';
import { reportingCommand } from './reportingCommand.js';
import type { Session } from './session.js';
import { askSubmit, lastSubmit, rememberPreset, runChoices } from './submit/askSubmit.js';
import { appEnded, jobProgressMessage } from './submit/jobProgress.js';
import { resourcesFit } from './submit/resourcesFit.js';
import { watchWaiting } from './submit/watchWaiting.js';
import type { Node } from './tree/nodes/node.js';
import type { SubmittedSelection } from './tree/revealSubmitted.js';

interface Deps {
  session: Session;
  logs: LogDocuments;
  openDashboard: () => void;
  memento: vscode.Memento;
  host: Host;
  selection: SubmittedSelection;
  /** The extension's own version (its package.json). */
  version: string;
  outputs: DriverOutputs;
  reports: RunReports;
  failures: FailureDocuments;
}

export function registerCommands(d: Deps): vscode.Disposable[] {
  const { session } = d;
  const cmd = reportingCommand(d.host);
  return [
    cmd('wick.showVersion', () => showVersion(d)),
    cmd('wick.startLocalCluster', async () => {
      session.target = 'local';
      const c = await session.connect('local');
      if (c.kind === 'error') throw new Error(`The local cluster did not start: ${c.message}`);
      return c;
    }),
    cmd('wick.stopLocalCluster', () => session.disconnect(true)),
    cmd('wick.connect', async (url?: string) => {
      const master =
        url ??
        (await vscode.window.showInputBox({
          title: 'Connect to Master',
          prompt: 'wick://host:port (several masters: wick://h1:7077,h2:7077)',
          value:
            session.target && session.target !== 'local' ? session.target : 'wick://127.0.0.1:7077',
          validateInput: (v) =>
            /^wick:\/\/[^\s]+$/.test(v.trim()) ? undefined : 'Expected wick://host:port',
        }));
      if (!master) return undefined;
      if (session.connection.kind !== 'disconnected') await session.disconnect(false);
      session.target = master.trim();
      const c = await session.connect(session.target);
      if (c.kind === 'error') throw new Error(`Cannot reach ${master}: ${c.message}`);
      return c;
    }),
    cmd('wick.disconnect', () => session.disconnect(false)),
    cmd('wick.refresh', async () => {
      if (session.connection.kind === 'error') {
        await session.disconnect(false);
        await session.connect();
      }
      for (const t of session.trees) t.refresh();
    }),
    cmd('wick.submit', (uri?: vscode.Uri) => submit(d, uri)),
    cmd('wick.runFile', (uri?: vscode.Uri) => submit(d, uri, undefined, 'run')),
    cmd('wick.submitAgain', () => submit(d, undefined, undefined, 'again')),
    cmd('wick.killApplication', (node?: Node, nodes?: Node[]) =>
      kill(
        d,
        pick(node, nodes, 'app').map((n) => (n as Extract<Node, { kind: 'app' }>).app.id),
        'application',
      ),
    ),
    cmd('wick.killDriver', (node?: Node, nodes?: Node[]) =>
      kill(
        d,
        pick(node, nodes, 'driver').map((n) => (n as Extract<Node, { kind: 'driver' }>).driver.id),
        'driver',
      ),
    ),
    cmd('wick.showSubmittedLogs', (r?: Submitted) => showSubmittedLogs(d, r)),
    cmd('wick.showDriverOutput', (arg?: unknown) => showDriverOutput(d.outputs, d.session, arg)),
    cmd('wick.showStdout', (node?: Node) => showLog(d, node, 'stdout')),
    cmd('wick.showStderr', (node?: Node) => showLog(d, node, 'stderr')),
    cmd('wick.loadEarlierLog', async () => {
      const uri = vscode.window.activeTextEditor?.document.uri;
      if (uri?.scheme !== 'wick-log') throw new Error('Open a Wick log first');
      await d.logs.loadEarlier(uri);
    }),
    cmd('wick.openDashboard', () => d.openDashboard()),
    cmd('wick.showFailedTask', (node?: Node) => showFailedTask(d, node)),
    cmd('wick.openRunFile', async (node?: Node) => {
      if (node?.kind !== 'file') throw new Error('Select a driver output or a log of a past run');
      const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(node.path));
      await vscode.languages.setTextDocumentLanguage(doc, 'log');
      return vscode.window.showTextDocument(doc, { preview: false });
    }),
    cmd('wick.copyId', async (node?: Node) => {
      const id = node ? idOf(node) : undefined;
      if (!id) throw new Error('Select an application, executor, driver or worker to copy its id');
      await vscode.env.clipboard.writeText(id);
      return id;
    }),
  ];
}

/**
 * The extension's version and the running agent's, as the agent itself reported it when it
 * started (serverInfo of the initialize handshake), so that an agent from another build shows.
 */
function showVersion(d: Deps): { extension: string; agent: string | undefined } {
  const agent = d.session.client.initializeResult?.serverInfo?.version;
  void d.host.showInformationMessage(
    `Wick ${d.version}; agent ${agent ?? 'not running (or it did not report a version)'}`,
  );
  return { extension: d.version, agent };
}

/** The failure of the node's application (a failure row, a failed app or past run). */
function showFailedTask(d: Deps, node: Node | undefined): Thenable<vscode.TextEditor> {
  const f =
    node?.kind === 'failure'
      ? node
      : node?.kind === 'app' && node.app.failure
        ? { appId: node.app.id, name: node.app.name, failure: node.app.failure }
        : node?.kind === 'run' && node.run.failure
          ? { appId: node.run.appId, name: node.run.name, failure: node.run.failure }
          : undefined;
  if (!f) throw new Error('Select a failed application (or its failure row) to show its error');
  return d.failures.show(f);
}

function pick(node: Node | undefined, nodes: Node[] | undefined, kind: Node['kind']): Node[] {
  const all = (nodes?.length ? nodes : node ? [node] : []).filter((n) => n.kind === kind);
  if (all.length === 0)
    throw new Error(
      `Select ${kind === 'app' ? 'an application' : 'a driver'} in the Wick view first`,
    );
  return all;
}

function idOf(n: Node): string | undefined {
  switch (n.kind) {
    case 'app':
      return n.app.id;
    case 'driver':
      return n.driver.id;
    case 'executor':
      return `${n.exec.appId}/${n.exec.id}`;
    case 'worker':
      return n.worker.id;
    case 'master':
      return n.state.url;
    case 'peer':
      return n.master.url;
    default:
      return undefined;
  }
}

async function showLog(
  d: Deps,
  node: Node | undefined,
  stream: 'stdout' | 'stderr',
): Promise<vscode.TextEditor> {
  const source =
    node?.kind === 'log'
      ? node.owner
      : node?.kind === 'executor'
        ? { appId: node.exec.appId, execId: node.exec.id }
        : node?.kind === 'driver'
          ? { driverId: node.driver.id }
          : undefined;
  if (!source) throw new Error(`Select an executor or a driver to show its ${stream}`);
  return openLog(d, source, stream);
}

async function openLog(
  d: Deps,
  source: LogSource,
  stream: 'stdout' | 'stderr',
): Promise<vscode.TextEditor> {
  const doc = await vscode.workspace.openTextDocument(
    logUri(source, stream, appNameOf(d.session.state, source)),
  );
  await vscode.languages.setTextDocumentLanguage(doc, 'log');
  return vscode.window.showTextDocument(doc, { preview: false });
}

/** The name of the app a log belongs to (a driver's: its application file), when known. */
function appNameOf(s: MasterState | undefined, source: LogSource): string | undefined {
  if (!s) return undefined;
  const apps = [...s.activeApps, ...s.completedApps];
  if ('appId' in source) return apps.find((a) => a.id === source.appId)?.name;
  const driver = [...s.activeDrivers, ...s.completedDrivers].find((x) => x.id === source.driverId);
  return driver ? basename(driver.appPath) : undefined;
}

async function kill(
  d: Deps,
  ids: string[],
  what: string,
): Promise<{ success: boolean; message: string }[]> {
  const auto =
    vscode.workspace.getConfiguration('wick').get<boolean>('kill.confirm', true) === false;
  if (!auto) {
    const ok = await d.host.showWarningMessage(
      ids.length === 1
        ? `Kill ${what} ${ids[0]}?`
        : `Kill ${ids.length} ${what}s (${ids.join(', ')})?`,
      { modal: true },
      'Kill',
    );
    if (ok !== 'Kill') return [];
  }
  const results = await Promise.all(ids.map((id) => d.session.client.sendRequest(Kill, { id })));
  const failed = results.filter((r) => !r.success);
  if (failed.length)
    void d.host.showErrorMessage(
      `Wick: ${failed.length} of ${ids.length} not killed: ${failed.map((r) => r.message).join('; ')}`,
    );
  else void d.host.showInformationMessage(results.map((r) => r.message).join('; '));
  return results;
}

/**
 * Submit Job…: file (the active editor's by default), then the questions of askSubmit. `preset`
 * (used by tests and keybindings) skips the questions; `how` is Run (this file's last choices, no
 * questions) or Submit Again (the last submit).
 */
async function submit(
  d: Deps,
  uri?: vscode.Uri,
  preset?: Partial<SubmitParams>,
  how: 'ask' | 'run' | 'again' = 'ask',
): Promise<unknown> {
  let file = uri?.fsPath ?? vscode.window.activeTextEditor?.document.uri.fsPath;
  if (uri && !(uri instanceof vscode.Uri)) {
    preset = uri as unknown as Partial<SubmitParams>;
    file = preset.file;
  }
  let params: SubmitParams | undefined;
  if (how === 'again') {
    params = lastSubmit(d.memento);
    file = params.file;
  } else {
    // Run on Wick from outside an editor (the walkthrough's button: the Welcome page is active):
    // the job New Job wrote, rather than a file dialog.
    if (!file && how === 'run') file = lastNewJob(d.memento);
    if (!file || !/\.(m?js|ts)$/.test(file)) {
      const picked = await vscode.window.showOpenDialog({
        title: 'Submit Job: the application file',
        filters: { Applications: ['ts', 'js', 'mjs'] },
        canSelectMany: false,
      });
      file = picked?.[0]?.fsPath;
    }
    if (!file) return undefined;
    if (preset?.deployMode) {
      params = {
        file,
        args: preset.args ?? [],
        deployMode: preset.deployMode,
        ...(preset.executorMemory ? { executorMemory: preset.executorMemory } : {}),
        ...(preset.executorCores ? { executorCores: preset.executorCores } : {}),
        ...(preset.maxCores ? { maxCores: preset.maxCores } : {}),
        ...(preset.supervise ? { supervise: true } : {}),
        ...(preset.name ? { name: preset.name } : {}),
      };
      await rememberPreset(d.memento, params);
    } else if (how === 'run') params = await runChoices(d.memento, file);
    else params = await askSubmit(d.memento, file);
  }
  if (!params) return undefined;
  const run = d.outputs.create(params.file, params.deployMode);
  // A copy: the remembered choices (Submit Again) are not this run's.
  const request: SubmitParams = { ...params, outputId: run.id };
  const result = await submitWithProgress(d, run, request, basename(params.file));
  if (!result) return undefined;
  if (!result.success) {
    // The driver's own output (a syntax error, a usage line) makes the failure's report.
    if (d.reports.failedToSubmit(run)) return result;
    throw new Error(result.message);
  }
  if (result.appId) run.appId = result.appId;
  if (result.driverId) run.driverId = result.driverId;
  // The app's "driver output" row.
  for (const t of d.session.trees) t.refresh();
  if (result.appId && result.driverId) rememberDriver(result.appId, result.driverId);
  if (result.appId)
    void d.selection.reveal(result.appId).catch((err) => console.warn(`Wick: ${err}`));
  watchWaiting(d, { appId: result.appId, driverId: result.driverId });
  if (openOutputWhen() === 'onStart')
    void d.outputs.show(run).then(undefined, (err) => console.warn(`Wick: ${err}`));
  // Offered for presets too: the in-host tests answer it through the Host seam.
  void d.host.showInformationMessage(result.message, 'Show Logs').then((choice) => {
    if (choice === 'Show Logs')
      void vscode.commands.executeCommand('wick.showDriverOutput', { outputId: run.id });
  });
  return { ...result, outputId: run.id };
}

/**
 * Connects (starting the local cluster) while the agent bundles the file: the bundle's failure,
 * should it come first, is the answer (its output is the run's already); else undefined once
 * connected. A connection that fails throws, as ensureConnected does.
 */
async function untilConnected(
  d: Deps,
  p: SubmitParams,
): Promise<{ success: false; message: string } | undefined> {
  const ready = d.session.ensureConnected().then(() => undefined);
  const checked = d.session.client
    .sendRequest(CheckApplication, { file: p.file, outputId: p.outputId })
    .then(
      (r) => (r.success ? ready : { success: false as const, message: r.message }),
      // An agent that cannot check (an older one) leaves it to the submit.
      () => ready,
    );
  const first = await Promise.race([checked, ready]);
  if (first) ready.catch(() => {});
  return first ?? (await checked);
}

/**
 * One progress notification for a submit, from its phases ("Starting the local cluster…",
 * "Bundling…", "Starting the driver…") on through its app's executors and jobs (jobProgress.ts)
 * until the app ends, when the run's report takes over. Resolves with the submit's answer as soon
 * as there is one; the notification lives on. Its Cancel kills the app (at once, or as soon as
 * the submit answers with its id): a user who cancels a submit wants nothing left running.
 */
function submitWithProgress(
  d: Deps,
  run: DriverRun,
  request: SubmitParams,
  name: string,
): Promise<SubmitAnswer | undefined> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const answer = (r: SubmitAnswer | undefined) => {
      answered = true;
      resolve(r);
    };
    void d.host.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: `Running ${name} on Wick`,
        cancellable: true,
      },
      async (progress, token) => {
        const step = (message: string) => progress.report({ message });
        try {
          if (d.session.connection.kind !== 'connected') {
            d.reports.submitting(run);
            step(
              d.session.masterSetting() === 'local'
                ? 'Starting the local cluster…'
                : 'Connecting to the master…',
            );
            // While the cluster starts, the file is bundled in the agent: a syntax error is told
            // now, not after the cluster is up (issue 29: 15.5 s behind a bare "Submitting…").
            const failed = await untilConnected(d, request);
            if (failed) return answer(failed);
          }
          if (!(await resourcesFit(d, request))) return answer(undefined);
          d.reports.submitting(run);
          step(`Bundling ${name}…`);
          const progressed = d.session.onDidSubmitProgress((p) => {
            if (p.outputId === run.id) step(p.message);
          });
          let r: SubmitAnswer;
          try {
            r = await d.session.client.sendRequest(SubmitApplication, request);
          } finally {
            progressed.dispose();
          }
          answer(r);
          if (r.success && r.appId) await followJob(d, r.appId, step, token);
        } catch (err) {
          if (!answered) reject(err);
          else console.warn(`Wick: ${(err as Error).message}`);
        }
      },
    );
  });
}

type SubmitAnswer = { success: boolean; message: string; appId?: string; driverId?: string };

/**
 * The notification's words while app `appId` runs, on each push; ends when the app ends (or the
 * connection goes). Cancel kills the app, without the confirmation the tree's Kill asks: the
 * button was the question.
 */
function followJob(
  d: Deps,
  appId: string,
  step: (message: string) => void,
  token: vscode.CancellationToken,
): Promise<void> {
  return new Promise<void>((resolve) => {
    const subs: vscode.Disposable[] = [];
    let seen = false;
    let last = '';
    const done = () => {
      for (const x of subs) x.dispose();
      resolve();
    };
    const look = (state: MasterState | undefined) => {
      const app = [...(state?.activeApps ?? []), ...(state?.completedApps ?? [])].find(
        (a) => a.id === appId,
      );
      if (app) seen = true;
      if (d.session.connection.kind !== 'connected' || (seen && appEnded(app))) return done();
      if (!app) return;
      const message = jobProgressMessage(app);
      if (message === last) return;
      last = message;
      step(message);
    };
    const cancel = () => {
      step(`Killing ${appId}…`);
      void d.session.client.sendRequest(Kill, { id: appId }).then(
        (r) =>
          r.success
            ? undefined
            : void d.host.showErrorMessage(`Wick: ${appId} was not killed: ${r.message}`),
        (err: Error) =>
          void d.host.showErrorMessage(`Wick: ${appId} was not killed: ${err.message}`),
      );
      done();
    };
    if (token.isCancellationRequested) return cancel();
    subs.push(
      token.onCancellationRequested(cancel),
      d.session.onDidPush((m) => look(m.state)),
    );
    look(d.session.state);
  });
}

/**
 * An app's logs by id (the Applications view's reveal-and-follow): the driver's stdout, or the first executor's, waiting (cancellably,
 * on pushed state) for that executor when the app has none yet.
 */
async function showSubmittedLogs(d: Deps, r?: Submitted): Promise<vscode.TextEditor | undefined> {
  if (!r?.appId && !r?.driverId) throw new Error('Show Logs needs the submitted app or driver id');
  let source = submittedLogSource(r, d.session.state);
  if (!source) {
    source = await vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: `Waiting for an executor of ${r.appId}…`,
        cancellable: true,
      },
      (_, token) =>
        new Promise<LogSource | undefined>((resolve, reject) => {
          const subs: vscode.Disposable[] = [];
          const done = (v: LogSource | undefined, err?: Error) => {
            for (const x of subs) x.dispose();
            if (err) reject(err);
            else resolve(v);
          };
          subs.push(
            token.onCancellationRequested(() => done(undefined)),
            d.session.onDidPush((m) => {
              try {
                const s = submittedLogSource(r, m.state);
                if (s) done(s);
              } catch (err) {
                done(undefined, err as Error);
              }
            }),
          );
        }),
    );
  }
  return source ? openLog(d, source, 'stdout') : undefined;
}
