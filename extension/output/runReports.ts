/**
 * What the user is told when a run submitted from this window ends: a failure is an error
 * notification quoting the error's first line, with "Show Output" and "Go to Source", and
 * Problems entries (collection `wick`) on the lines it points at, cleared when the same file is
 * submitted again. A run that finished (or was killed) is a notification quoting the last lines
 * the application printed, its answer, with "Show Output": the user who pressed Run is waiting
 * for that answer and should not have to open a log to read it. `wick.submit.openOutput`
 * opens the output by itself as the run starts or ends; its default, `never`, keeps the
 * editor's focus on the user's code (the answer is in the notification, the output one click
 * away). A run is judged once its driver's output is complete and the master has said how the
 * app (or driver) ended; should that word never come, 10 s after the driver's exit it is judged
 * on what is known.
 */
import { existsSync } from 'node:fs';
import { basename, join, sep } from 'node:path';
import * as vscode from 'vscode';
import type { MasterState } from '../../backend/agent/protocol.js';
import type { Host } from '../host.js';
import type { Session } from '../session.js';
import type { DriverOutputs, DriverRun } from './driverOutputs.js';
import { failureOf, type Outcome, outcome } from './outcome.js';

const ENDED = ['FINISHED', 'FAILED', 'KILLED', 'ERROR'];
/** How long after the driver's exit a run waits for the master's word before it is judged. */
const VERDICT_WAIT_MS = 10_000;

import { DEBUG_FAILED_TASK, failedTaskRun } from '../debug/debugFailedTask.js';

export class RunReports implements vscode.Disposable {
  readonly diagnostics = vscode.languages.createDiagnosticCollection('wick');
  /** The files each submitted file's last run put Problems entries on. */
  private readonly diagnosed = new Map<string, vscode.Uri[]>();
  private readonly judged = new Set<string>();
  private readonly submitFailed = new Set<string>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly reported = new vscode.EventEmitter<{ run: DriverRun; outcome: Outcome }>();
  /** Every judged run, failed or not (for tests and the tree). */
  readonly onDidReport = this.reported.event;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly outputs: DriverOutputs,
    private readonly session: Session,
    private readonly host: Host,
    /** Where Wick itself is installed: frames in its own code are not the user's. */
    private readonly wickRoot: string,
  ) {
    this.disposables.push(
      outputs.onDidExit((run) => {
        this.timers.set(
          run.id,
          setTimeout(() => this.judge(run, true), VERDICT_WAIT_MS),
        );
        this.judge(run, false);
      }),
      session.onDidPush(() => {
        for (const id of this.timers.keys()) {
          const run = outputs.get(id);
          if (run) this.judge(run, false);
        }
      }),
    );
  }

  /** A new submit of `run.file`: the Problems its last run left go. */
  submitting(run: DriverRun): void {
    this.session.noteRun(undefined);
    for (const uri of this.diagnosed.get(run.file) ?? []) this.diagnostics.delete(uri);
    this.diagnostics.delete(vscode.Uri.file(run.file));
    this.diagnosed.delete(run.file);
  }

  /**
   * The submit itself failed (before an app registered). True when the run's output tells the
   * story (the failure is reported from it); false when there is none (the caller says why).
   */
  failedToSubmit(run: DriverRun): boolean {
    this.submitFailed.add(run.id);
    if (!run.exit && !run.text) return false;
    if (run.exit) this.judge(run, true);
    return true;
  }

  private judge(run: DriverRun, force: boolean): void {
    if (this.judged.has(run.id) || !run.exit) return;
    const state = this.session.state;
    const app = findApp(state, run.appId);
    const driver = findDriver(state, run.driverId);
    const submitFailed = this.submitFailed.has(run.id);
    const known =
      submitFailed ||
      (app !== undefined && ENDED.includes(app.state)) ||
      (driver !== undefined && ENDED.includes(driver.state) && !run.appId);
    if (!known && !force) return;
    this.judged.add(run.id);
    clearTimeout(this.timers.get(run.id));
    this.timers.delete(run.id);
    if (app?.name) run.appName ??= app.name;
    const failure = failureOf(app);
    const o = outcome({
      file: run.file,
      deployMode: run.deployMode,
      text: run.text,
      ...(run.deployMode === 'client' ? { exitCode: run.exit.code } : {}),
      ...(run.appName ? { appName: run.appName } : {}),
      ...(app ? { appState: app.state } : {}),
      ...(failure ? { failure } : {}),
      ...(driver ? { driverState: driver.state } : {}),
      ...(driver?.exception ? { driverException: driver.exception } : {}),
      submitFailed,
      accept: (file) => this.isUsers(file, run.file),
    });
    if (o.failed) this.fail(run, o);
    else this.ended(run, o);
    this.session.noteRun(
      o.failed ? { name: run.appName ?? basename(run.file), message: o.message } : undefined,
    );
    if (openOutputWhen() === 'onEnd') void this.outputs.show(run).then(undefined, warn);
    this.reported.fire({ run, outcome: o });
  }

  /** A frame the user can open: on this machine, in the workspace (or the submitted file), not Wick's. */
  private isUsers(file: string, submitted: string): boolean {
    if (file.startsWith(join(this.wickRoot, 'dist') + sep) || !existsSync(file)) return false;
    return (
      file === submitted || vscode.workspace.getWorkspaceFolder(vscode.Uri.file(file)) !== undefined
    );
  }

  private ended(run: DriverRun, o: Outcome): void {
    const answer = o.answer?.length ? `: ${o.answer.join(' · ')}` : '';
    vscode.window.setStatusBarMessage(`$(pass) Wick: ${o.message}`, 10_000);
    void this.host
      .showInformationMessage(`Wick: ${o.message}${answer}`, 'Show Output')
      .then((choice) => {
        if (choice === 'Show Output') void this.outputs.show(run).then(undefined, warn);
      });
  }

  private fail(run: DriverRun, o: Outcome): void {
    const byFile = new Map<string, vscode.Diagnostic[]>();
    for (const p of o.problems) {
      const at = new vscode.Position(p.line - 1, p.column - 1);
      const d = new vscode.Diagnostic(
        new vscode.Range(at, at),
        p.message,
        vscode.DiagnosticSeverity.Error,
      );
      d.source = 'wick';
      byFile.set(p.file, [...(byFile.get(p.file) ?? []), d]);
    }
    const uris: vscode.Uri[] = [];
    for (const [file, diags] of byFile) {
      const uri = vscode.Uri.file(file);
      this.diagnostics.set(uri, diags);
      uris.push(uri);
    }
    this.diagnosed.set(run.file, uris);
    // Without a line of the user's, the source is still the submitted file (its Problems entry).
    const source = o.location ?? o.problems[0];
    const debuggable = o.task && o.location ? failedTaskRun(run.file, o) : undefined;
    const items = [
      'Show Output',
      ...(source ? ['Go to Source'] : []),
      ...(debuggable ? [DEBUG_FAILED_TASK] : []),
    ];
    void this.host.showErrorMessage(`Wick: ${o.message}`, ...items).then(async (choice) => {
      try {
        if (choice === 'Show Output') await this.outputs.show(run);
        if (choice === 'Go to Source' && source) await goToSource(source);
        if (choice === DEBUG_FAILED_TASK && debuggable)
          await vscode.commands.executeCommand('wick.debugFailedTask', debuggable);
      } catch (err) {
        void this.host.showErrorMessage(`Wick: ${(err as Error).message}`);
      }
    });
  }

  dispose(): void {
    for (const t of this.timers.values()) clearTimeout(t);
    for (const d of this.disposables) d.dispose();
    this.diagnostics.dispose();
    this.reported.dispose();
  }
}

/** `wick.submit.openOutput`: when a run's output opens by itself. */
export function openOutputWhen(): 'never' | 'onStart' | 'onEnd' {
  const v = vscode.workspace.getConfiguration('wick').get<string>('submit.openOutput', 'never');
  return v === 'onStart' || v === 'onEnd' ? v : 'never';
}

function warn(err: unknown): void {
  console.warn(`Wick: ${(err as Error).message ?? err}`);
}

async function goToSource(l: { file: string; line: number; column: number }): Promise<void> {
  if (!existsSync(l.file))
    throw new Error(`${l.file} is not on this machine (the driver ran elsewhere)`);
  const at = new vscode.Position(l.line - 1, l.column - 1);
  await vscode.window.showTextDocument(vscode.Uri.file(l.file), {
    selection: new vscode.Range(at, at),
    preview: false,
  });
}

function findApp(s: MasterState | undefined, id: string | undefined) {
  return id && s ? [...s.activeApps, ...s.completedApps].find((a) => a.id === id) : undefined;
}

function findDriver(s: MasterState | undefined, id: string | undefined) {
  return id && s ? [...s.activeDrivers, ...s.completedDrivers].find((d) => d.id === id) : undefined;
}
