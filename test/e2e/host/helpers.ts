/** What the in-host steps share: the extension's test API, steps and their report, event waits. */
import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import type { MasterState } from '../../../backend/agent/protocol.js';
import type { Host } from '../../../extension/host.js';
import type { FollowScroll } from '../../../extension/logs/followScroll.js';
import type { LogDocuments } from '../../../extension/logs/logDocuments.js';
import type { Session } from '../../../extension/session.js';
import type { Model, Node } from '../../../extension/tree/model.js';
import type { WickTreeProvider } from '../../../extension/tree/treeView.js';
import { within } from '../../helpers/within.js';

export interface Api {
  session: Session;
  client: LanguageClient;
  host: Host;
  logs: LogDocuments;
  clusterTree: WickTreeProvider;
  appsTree: WickTreeProvider;
  appsView: vscode.TreeView<Node>;
  follow: FollowScroll;
  activationMs: number;
}

export const results: { name: string; ok: boolean; ms: number; error?: string }[] = [];
export const figures: Record<string, number> = {};

const only = process.env.WICK_E2E_ONLY ? new RegExp(process.env.WICK_E2E_ONLY) : undefined;

export async function step(name: string, fn: () => Promise<void>): Promise<void> {
  if (only && !only.test(name)) return;
  const t0 = Date.now();
  try {
    await fn();
    results.push({ name, ok: true, ms: Date.now() - t0 });
  } catch (err) {
    results.push({
      name,
      ok: false,
      ms: Date.now() - t0,
      error: (err as Error).stack ?? String(err),
    });
  }
}

/** Resolves with the first model (now or pushed later) for which `pred` holds. */
export function until<T>(
  s: Session,
  pred: (m: Model) => T | undefined,
  event: 'push' | 'render' = 'push',
): Promise<T> {
  return new Promise((resolve) => {
    const now = pred(s.model());
    if (now !== undefined) return resolve(now);
    const sub = (event === 'push' ? s.onDidPush : s.onDidChange)((m) => {
      const v = pred(m);
      if (v !== undefined) {
        sub.dispose();
        resolve(v);
      }
    });
  });
}

/** Bounds a wait: a step that waits on something that never comes fails instead of hanging. */
export { within };

/**
 * Resolves once the view's selection satisfies `pred`, within `ms`. Polled as well as heard: the
 * extension host maps the selected ids to the latest rendered nodes, so the selection can come to
 * satisfy `pred` (a row re-rendered with a new state) without a change event.
 */
export function selectionUntil<T>(
  view: vscode.TreeView<T>,
  pred: (selection: readonly T[]) => boolean,
  ms: number,
  what: () => string,
): Promise<void> {
  if (pred(view.selection)) return Promise.resolve();
  let sub: vscode.Disposable | undefined;
  let poll: NodeJS.Timeout | undefined;
  return within(
    ms,
    new Promise<void>((resolve) => {
      const check = () => {
        if (pred(view.selection)) resolve();
      };
      sub = view.onDidChangeSelection(check);
      poll = setInterval(check, 50);
    }),
    what,
  ).finally(() => {
    sub?.dispose();
    clearInterval(poll);
  });
}

/** Resolves once `doc`'s text satisfies `pred` (now or after a later change). */
export function textUntil(
  doc: vscode.TextDocument,
  pred: (text: string) => boolean,
): Promise<string> {
  return new Promise((resolve) => {
    if (pred(doc.getText())) return resolve(doc.getText());
    const sub = vscode.workspace.onDidChangeTextDocument((e) => {
      if (e.document === doc && pred(doc.getText())) {
        sub.dispose();
        resolve(doc.getText());
      }
    });
  });
}

/** The next change of `doc`; create it before the action that changes it. */
export function nextChange(doc: vscode.TextDocument): Promise<void> {
  return new Promise((resolve) => {
    const sub = vscode.workspace.onDidChangeTextDocument((e) => {
      if (e.document === doc) {
        sub.dispose();
        resolve();
      }
    });
  });
}

export const apps = (s?: MasterState) => (s ? [...s.activeApps, ...s.completedApps] : []);
export const drivers = (s?: MasterState) => (s ? [...s.activeDrivers, ...s.completedDrivers] : []);

export const twoAlive = (m: Model) =>
  m.connection.kind === 'connected' &&
  m.state?.workers.filter((w) => w.state === 'ALIVE').length === 2
    ? true
    : undefined;

export type SubmitResult = { appId?: string; driverId?: string; success: boolean; message: string };

export async function submit(params: Record<string, unknown>): Promise<SubmitResult> {
  return (await vscode.commands.executeCommand('wick.submit', params)) as SubmitResult;
}

/** Sets a `wick.*` setting for the rest of a step; the returned function puts the old one back. */
export async function setting(key: string, value: unknown): Promise<() => Promise<void>> {
  const conf = vscode.workspace.getConfiguration('wick');
  const old = conf.inspect(key)?.globalValue;
  await conf.update(key, value, vscode.ConfigurationTarget.Global);
  return () => conf.update(key, old, vscode.ConfigurationTarget.Global) as Promise<void>;
}

export interface Shown {
  message: string;
  items: string[];
  modal: boolean;
}

/**
 * Answers one kind of the extension's notifications as a user clicking would (through its Host
 * seam), recording each one shown, until restore(): the code after the click is the real one.
 */
export class Answering {
  readonly shown: Shown[] = [];
  private readonly original: Host[keyof Host];
  private waiters: { pred: (s: Shown) => boolean; resolve: (s: Shown) => void }[] = [];

  constructor(
    private readonly host: Host,
    private readonly method: keyof Host,
    choose: (s: Shown) => string | undefined,
  ) {
    this.original = host[method];
    const fake = (message: string, ...rest: unknown[]) => {
      const warning = method === 'showWarningMessage';
      const shown: Shown = {
        message,
        items: (warning ? rest.slice(1) : rest) as string[],
        modal: warning && (rest[0] as vscode.MessageOptions | undefined)?.modal === true,
      };
      this.shown.push(shown);
      for (const w of this.waiters.filter((x) => x.pred(shown))) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve(shown);
      }
      return Promise.resolve(choose(shown));
    };
    (host as unknown as Record<string, unknown>)[method] = fake;
  }

  /** The first notification (already shown or to come) that `pred` accepts. */
  next(pred: (s: Shown) => boolean = () => true): Promise<Shown> {
    const seen = this.shown.find(pred);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => this.waiters.push({ pred, resolve }));
  }

  restore(): void {
    (this.host as unknown as Record<string, unknown>)[this.method] = this.original;
  }
}

/**
 * A file in the work dir of the local cluster the agent started: kept in the extension's storage
 * (runs kept across windows), else tmpdir/wick-vscode-<pid>-….
 */
export async function workFile(s: Session, ...rel: string[]): Promise<string> {
  const { pid, clusterDir } = await within(10_000, s.status(), 'the agent status');
  if (clusterDir) return join(clusterDir, ...rel);
  const dirs = readdirSync(tmpdir()).filter((d) => d.startsWith(`wick-vscode-${pid}-`));
  if (dirs.length !== 1)
    throw new Error(`Expected one local cluster dir of agent ${pid} in ${tmpdir()}, found ${dirs}`);
  return join(tmpdir(), dirs[0] as string, ...rel);
}

/**
 * Checks that a log document followed to its end holds exactly the file's bytes (none lost or
 * repeated), then only the note saying how it ended; returns that note.
 */
export function endedAfter(text: string, disk: string): string {
  if (!text.startsWith(disk)) {
    let i = 0;
    while (i < disk.length && text[i] === disk[i]) i++;
    throw new Error(
      `The log differs from the file at char ${i}: file ${JSON.stringify(disk.slice(i, i + 80))}, document ${JSON.stringify(text.slice(i, i + 80))}`,
    );
  }
  const rest = text.slice(disk.length);
  const newline = disk === '' || disk.endsWith('\n') ? '' : '\n';
  const m = /^\[([^\]\n]+)\]\n$/.exec(rest.startsWith(newline) ? rest.slice(newline.length) : '');
  if (!m)
    throw new Error(
      `After the file's bytes, expected "[how it ended]", got ${JSON.stringify(rest)}`,
    );
  return m[1] as string;
}

export const endedNote = (text: string) => /\[[^\]\n]+\]\n$/.test(text);

/** Where apps stand, for a timeout's message. */
export function describeApps(s: Session, ids: string[]): string {
  return ids
    .map((id) => {
      const a = apps(s.state).find((x) => x.id === id);
      return `${id} ${a?.state ?? 'unknown'}${a?.waitingReason ? ` (${a.waitingReason})` : ''}`;
    })
    .join(', ');
}
