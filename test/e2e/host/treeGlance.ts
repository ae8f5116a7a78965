/**
 * The tree read at a glance, as the extension's own views render it (their providers, so the
 * extension's module state is the one read): descriptions lead with state and cores, executors
 * that ended as their app meant wear no failure icon, a driver is named after its app and
 * source; the state filter and Clear Completed; Describe; WICK_MASTER in a real terminal.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { Node } from '../../../extension/tree/model.js';
import { type Api, apps, step, submit, textUntil, until, within } from './helpers.js';

export async function treeGlanceSteps(api: Api, root: string): Promise<void> {
  const s = api.session;
  const tree = api.appsTree;
  const groups = () => tree.getChildren();
  const group = (name: string) => {
    const g = groups().find((n) => n.kind === 'group' && n.group === name);
    assert.ok(g, `the ${name} group`);
    return g;
  };
  const label = (n: Node) => String(tree.getTreeItem(n).label);
  const description = (n: Node) => String(tree.getTreeItem(n).description ?? '');

  await step('tree rows lead with state and cores; normal ends wear no failure icon', async () => {
    const finished = tree
      .getChildren(group('completed'))
      .find((n) => n.kind === 'app' && n.app.state === 'FINISHED' && n.app.removedExecutors.length);
    assert.ok(finished, 'a FINISHED app with ended executors');
    assert.match(description(finished), /^FINISHED · \d+ cores? · .* · app-/);
    // Its executors (beside them, the driver output row of an app submitted here).
    for (const e of tree.getChildren(finished)) {
      if (e.kind !== 'executor') continue;
      const it = tree.getTreeItem(e);
      assert.match(String(it.description), /^(EXITED|KILLED)/);
      assert.equal((it.iconPath as vscode.ThemeIcon).id, 'pass', `${it.label}: no failure icon`);
    }
    const [master] = api.clusterTree.getChildren();
    for (const w of api.clusterTree.getChildren(master as Node)) {
      const it = api.clusterTree.getTreeItem(w);
      assert.match(String(it.label), /^127\.0\.0\.1:\d+$/, 'a worker by its address');
      assert.match(String(it.description), /^ALIVE · \d+\/\d+ cores · /);
    }
    // The merged-log step submitted Pi in cluster mode from this window: its driver says whose.
    const ds = tree.getChildren(group('drivers'));
    assert.ok(
      ds.some((d) => /^Wick Pi · pi\.ts$/.test(label(d))),
      `a driver named after its app: ${ds.map(label).join(', ')}`,
    );
    for (const d of ds) assert.match(description(d), /^[A-Z]+ · \d+ cores? · driver-/);
  });

  await step('the state filter and Clear Completed leave apps out of the view', async () => {
    try {
      await vscode.commands.executeCommand('wick.filterApplications', ['RUNNING', 'WAITING']);
      assert.equal(description(group('completed')), '0', 'completed apps filtered out');
      assert.match(String(api.appsView.description), /showing RUNNING, WAITING/);
      await vscode.commands.executeCommand('wick.filterApplications', []);
      assert.notEqual(description(group('completed')), '0', 'no filter: they are back');
      await vscode.commands.executeCommand('wick.clearCompleted');
      assert.equal(description(group('completed')), '0', 'cleared');
      // An app that completes after the clear shows.
      const r = await submit({
        file: join(root, 'examples', 'pi.ts'),
        args: ['2'],
        deployMode: 'client',
      });
      assert.ok(r?.success && r.appId, JSON.stringify(r));
      await until(s, (m) =>
        apps(m.state).find((a) => a.id === r.appId)?.state === 'FINISHED' ? true : undefined,
      );
      await s.settled();
      const shown = tree.getChildren(group('completed'));
      assert.deepEqual(
        shown.map((n) => (n.kind === 'app' ? n.app.id : n.kind)),
        [r.appId],
      );
    } finally {
      await vscode.commands.executeCommand('wick.filterApplications', []);
    }
  });

  await step("Describe opens a read-only document with the item's full state", async () => {
    const app = tree.getChildren(group('completed'))[0];
    assert.ok(app?.kind === 'app');
    const ed = (await vscode.commands.executeCommand('wick.describe', app)) as vscode.TextEditor;
    assert.ok(ed, 'Describe opened a document');
    assert.equal(ed.document.uri.scheme, 'wick-describe');
    const text = ed.document.getText();
    assert.match(
      text,
      new RegExp(`^Name:\\s+Wick Pi\\nID:\\s+${app.app.id}\\nState:\\s+FINISHED\\n`),
    );
    for (const part of ['Memory per Executor:', 'Removed Executors:', 'Events:'])
      assert.ok(text.includes(part), `${part} in\n${text}`);
    const [master] = api.clusterTree.getChildren();
    const [worker] = api.clusterTree.getChildren(master as Node);
    const wed = (await vscode.commands.executeCommand(
      'wick.describe',
      worker,
    )) as vscode.TextEditor;
    await within(
      5_000,
      textUntil(wed.document, (t) => /^ID:\s+worker-/.test(t) && /Last Heartbeat:/.test(t)),
      'the worker described',
    );
    await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
  });

  await step("WICK_MASTER in the integrated terminal is this window's cluster", async () => {
    const c = s.connection;
    assert.equal(c.kind, 'connected');
    const out = join(mkdtempSync(join(tmpdir(), 'wick-e2e-term-')), 'master');
    const t = vscode.window.createTerminal({
      name: 'wick env',
      shellPath: '/bin/sh',
      shellArgs: ['-c', `printf %s "$WICK_MASTER" > '${out}'`],
    });
    await within(
      20_000,
      new Promise<void>((resolve) => {
        const sub = vscode.window.onDidCloseTerminal((x) => {
          if (x === t) {
            sub.dispose();
            resolve();
          }
        });
      }),
      'the terminal to run and close',
    );
    assert.ok(existsSync(out), 'the shell wrote its environment');
    assert.equal(readFileSync(out, 'utf8'), c.kind === 'connected' ? c.url : '');
  });
}
