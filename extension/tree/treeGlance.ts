/**
 * The tree's commands for reading the cluster at a glance: Describe (a read-only `wick-describe:`
 * document with an item's whole state, kept current as the state is pushed), the Applications
 * view's state filter and Clear Completed, and WICK_MASTER in the integrated terminal's
 * environment for the window's cluster, so that `wick status` there talks to the same master.
 */
import * as vscode from 'vscode';
import type { Host } from '../host.js';
import { reportingCommand } from '../reportingCommand.js';
import type { Session } from '../session.js';
import type { AppFilterControl } from './appFilter.js';
import { type DescribeTarget, describe } from './describe.js';
import { describeChoices } from './describeChoices.js';
import type { Node } from './nodes/node.js';

export const describeScheme = 'wick-describe';

export function describeTarget(n: Node | undefined): DescribeTarget | undefined {
  switch (n?.kind) {
    case 'master':
      return { kind: 'master' };
    case 'worker':
      return { kind: 'worker', id: n.worker.id };
    case 'app':
      return { kind: 'app', id: n.app.id };
    case 'executor':
      return { kind: 'executor', appId: n.exec.appId, execId: n.exec.id };
    case 'driver':
      return { kind: 'driver', id: n.driver.id };
    default:
      return undefined;
  }
}

function uriOf(t: DescribeTarget): vscode.Uri {
  const name =
    t.kind === 'master' ? 'master' : t.kind === 'executor' ? `${t.appId}\u2215${t.execId}` : t.id;
  return vscode.Uri.from({
    scheme: describeScheme,
    path: `/describe ${name}`,
    query: JSON.stringify(t),
  });
}

function parseTarget(q: string): DescribeTarget {
  let t: unknown;
  try {
    t = JSON.parse(q);
  } catch {
    t = undefined;
  }
  const r = t as Record<string, unknown> | undefined;
  const id = (v: unknown) => typeof v === 'string' && v.length > 0 && v.length <= 200;
  if (r?.kind === 'master') return { kind: 'master' };
  if ((r?.kind === 'worker' || r?.kind === 'app' || r?.kind === 'driver') && id(r.id))
    return { kind: r.kind, id: r.id as string };
  if (r?.kind === 'executor' && id(r.appId) && Number.isInteger(r.execId))
    return { kind: 'executor', appId: r.appId as string, execId: r.execId as number };
  throw new Error(
    `Invalid describe address ${JSON.stringify(q)}: expected an item of the Wick view`,
  );
}

class DescribeDocuments implements vscode.TextDocumentContentProvider {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  constructor(private readonly session: Session) {}
  provideTextDocumentContent(uri: vscode.Uri): string {
    return describe(parseTarget(uri.query), this.session.state, Date.now());
  }
  /** The pushed state changed: open descriptions follow it. */
  refresh(): void {
    for (const d of vscode.workspace.textDocuments)
      if (d.uri.scheme === describeScheme) this.changed.fire(d.uri);
  }
  dispose(): void {
    this.changed.dispose();
  }
}

export function registerTreeGlance(d: {
  session: Session;
  host: Host;
  filter: AppFilterControl;
  env: vscode.GlobalEnvironmentVariableCollection;
}): vscode.Disposable[] {
  const docs = new DescribeDocuments(d.session);
  const cmd = reportingCommand(d.host);
  d.env.description = 'WICK_MASTER: the cluster of this window (Wick)';
  const setEnv = () => {
    const c = d.session.connection;
    if (c.kind === 'connected') d.env.replace('WICK_MASTER', c.url);
    else d.env.delete('WICK_MASTER');
  };
  setEnv();
  return [
    docs,
    vscode.workspace.registerTextDocumentContentProvider(describeScheme, docs),
    d.session.onDidChange(() => {
      docs.refresh();
      setEnv();
    }),
    cmd('wick.describe', async (node?: Node) => {
      // No item: the row's element was gone when its menu was clicked (describeChoices.ts).
      const t = describeTarget(node) ?? (await pickTarget(d.session, d.host));
      if (!t) return undefined;
      const doc = await vscode.workspace.openTextDocument(uriOf(t));
      return vscode.window.showTextDocument(doc, { preview: true });
    }),
    cmd('wick.filterApplications', (states?: string[]) => d.filter.pick(states)),
    cmd('wick.clearCompleted', () => d.filter.clearCompleted()),
  ];
}

async function pickTarget(session: Session, host: Host): Promise<DescribeTarget | undefined> {
  const choices = describeChoices(session.state);
  if (choices.length === 0)
    throw new Error('Not connected to a master: there is nothing to describe');
  const picked = await host.showQuickPick(choices, {
    title: 'Wick: Describe',
    placeHolder: 'The item to describe (the one that changed last first)',
    matchOnDescription: true,
  });
  return picked?.target;
}
