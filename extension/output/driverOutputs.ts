/**
 * One read-only document per submit from this window (`wick-output:` URIs, titled
 * `Wick: <app> (<app id>)`): the driver's stdout and stderr as the agent pushes them
 * (DriverOutput, then DriverExited), kept after the app has ended. A document rather than an
 * output channel or a terminal: its text can be searched, linked from the tree, read back by the
 * failure report, and tested; and it is what "Show Logs" opens.
 */
import { randomBytes } from 'node:crypto';
import { basename } from 'node:path';
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { DriverExited, DriverOutput } from '../../backend/agent/protocol.js';
import { type Debounced, debounce } from '../tree/debounce.js';

export const outputScheme = 'wick-output';
/** What one output keeps: the start of a longer one is dropped (and said so). */
const MAX_TEXT = 4 * 1024 * 1024;
/** The agent sends at most 16 KiB characters at a time (backend/agent/driverOutput.ts). */
const MAX_CHUNK = 64 * 1024;
/** The runs kept (each up to MAX_TEXT): the oldest goes when a new one would pass this. */
const MAX_RUNS = 50;

export interface DriverRun {
  readonly id: string;
  /** The submitted file. */
  readonly file: string;
  readonly deployMode: 'client' | 'cluster';
  appId?: string;
  driverId?: string;
  appName?: string;
  text: string;
  /** Characters dropped from the start to keep the text under MAX_TEXT. */
  dropped: number;
  /** The driver's end: its exit code (client mode; null when a signal ended it) and how. */
  exit?: { code: number | null; reason: string };
}

export class DriverOutputs implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly runs = new Map<string, DriverRun>();
  private readonly uris = new Map<string, vscode.Uri>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  private readonly exited = new vscode.EventEmitter<DriverRun>();
  /** A run's driver has exited and its output is complete. */
  readonly onDidExit = this.exited.event;
  private readonly appended = new vscode.EventEmitter<{ run: DriverRun; data: string }>();
  /** Text a run's driver wrote, as it arrives (the merged log follows it). */
  readonly onDidAppend = this.appended.event;
  private readonly pending = new Set<string>();
  private readonly flush: Debounced;
  private readonly disposables: vscode.Disposable[] = [];
  /** Notifications refused (unknown output id, bad fields), for diagnosis. */
  refused = 0;

  constructor() {
    // Many small writes would each make the editor read the whole text again: at most one
    // change per 50 ms per document.
    this.flush = debounce(() => {
      for (const id of this.pending) {
        const uri = this.uris.get(id);
        if (uri) this.changed.fire(uri);
      }
      this.pending.clear();
    }, 50);
  }

  attach(client: LanguageClient): void {
    this.disposables.push(
      client.onNotification(DriverOutput, (p) => {
        const run = typeof p?.outputId === 'string' ? this.runs.get(p.outputId) : undefined;
        if (
          !run ||
          (p.stream !== 'stdout' && p.stream !== 'stderr') ||
          typeof p.data !== 'string' ||
          p.data.length > MAX_CHUNK
        ) {
          this.refused++;
          return;
        }
        this.append(run, p.data);
      }),
      client.onNotification(DriverExited, (p) => {
        const run = typeof p?.outputId === 'string' ? this.runs.get(p.outputId) : undefined;
        if (
          !run ||
          run.exit ||
          !(p.exitCode === null || Number.isInteger(p.exitCode)) ||
          typeof p.reason !== 'string'
        ) {
          this.refused++;
          return;
        }
        run.exit = { code: p.exitCode, reason: p.reason.slice(0, 500) };
        this.touch(run);
        this.exited.fire(run);
      }),
    );
  }

  /** A new output for a submit about to be sent; its id goes in SubmitParams.outputId. */
  create(file: string, deployMode: 'client' | 'cluster'): DriverRun {
    const run: DriverRun = {
      id: randomBytes(8).toString('hex'),
      file,
      deployMode,
      text: '',
      dropped: 0,
    };
    this.runs.set(run.id, run);
    for (const old of [...this.runs.keys()].slice(0, Math.max(0, this.runs.size - MAX_RUNS))) {
      this.runs.delete(old);
      this.uris.delete(old);
    }
    return run;
  }

  get(id: string): DriverRun | undefined {
    return this.runs.get(id);
  }

  /** The newest run of application `appId`. */
  forApp(appId: string): DriverRun | undefined {
    return [...this.runs.values()].reverse().find((r) => r.appId === appId);
  }

  latest(): DriverRun | undefined {
    return [...this.runs.values()].pop();
  }

  /** The applications with an output in this window (the tree shows a row for each). */
  appIds(): ReadonlySet<string> {
    return new Set([...this.runs.values()].flatMap((r) => (r.appId ? [r.appId] : [])));
  }

  /** The run's document; its name is fixed when first asked for (a URI never changes). */
  uri(run: DriverRun): vscode.Uri {
    let uri = this.uris.get(run.id);
    if (!uri) {
      const name = (run.appName ?? basename(run.file)).replace(/[/\\]/g, '∕');
      const tag = run.appId ?? run.driverId ?? 'not registered';
      uri = vscode.Uri.from({
        scheme: outputScheme,
        path: `/Wick: ${name} (${tag})`,
        query: `id=${run.id}`,
      });
      this.uris.set(run.id, uri);
    }
    return uri;
  }

  async show(run: DriverRun): Promise<vscode.TextEditor> {
    const doc = await vscode.workspace.openTextDocument(this.uri(run));
    await vscode.languages.setTextDocumentLanguage(doc, 'log');
    return vscode.window.showTextDocument(doc, { preview: false });
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    const id = new URLSearchParams(uri.query).get('id') ?? '';
    const run = this.runs.get(id);
    if (!run)
      return '[This driver output is gone: it was from an earlier session of this window, or among the oldest of many]\n';
    this.uris.set(run.id, uri);
    const head = run.dropped ? `[… ${run.dropped} earlier characters dropped]\n` : '';
    const tail = run.exit
      ? `${run.text.endsWith('\n') || !run.text ? '' : '\n'}[${run.exit.reason}]\n`
      : '';
    return head + run.text + tail;
  }

  private append(run: DriverRun, data: string): void {
    run.text += data;
    this.appended.fire({ run, data });
    if (run.text.length > MAX_TEXT) {
      const cut = run.text.length - MAX_TEXT;
      run.text = run.text.slice(cut);
      run.dropped += cut;
    }
    this.touch(run);
  }

  private touch(run: DriverRun): void {
    if (!this.uris.has(run.id)) return;
    this.pending.add(run.id);
    this.flush();
  }

  dispose(): void {
    this.flush.dispose();
    for (const d of this.disposables) d.dispose();
    this.changed.dispose();
    this.exited.dispose();
    this.appended.dispose();
  }
}
