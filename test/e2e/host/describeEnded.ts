/**
 * Describe on an application that changes state under it (issue 29, item 8): the row is
 * right-clicked while the app runs, the app ends, its row moves to the Completed group (collapsed)
 * and the view forgets the element; VS Code then hands the menu's command `undefined` (its
 * ExtHostTreeView resolves the row's handle against the elements it still holds). Describe asks
 * which item, the app that just changed first, instead of failing with "Select a … to describe".
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { DescribeChoice } from '../../../extension/tree/describeChoices.js';
import { findApp, type Node } from '../../../extension/tree/model.js';
import { Answering, type Api, apps, step, submit, textUntil, until, within } from './helpers.js';

export async function describeEndedSteps(api: Api, root: string): Promise<void> {
  const s = api.session;

  await step('Describe from the row of an app that ended under it describes that app', async () => {
    await within(
      120_000,
      until(s, (m) => m.state),
      'the master state',
    );
    const r = await submit({
      file: join(root, 'test', 'fixtures', 'apps', 'until-killed.ts'),
      deployMode: 'client',
    });
    assert.ok(r?.success && r.appId, JSON.stringify(r));
    const id = r.appId;
    const running = await within(
      120_000,
      until(s, (m) => {
        const f = findApp(id, m);
        return f?.node.kind === 'app' && f.node.app.state === 'RUNNING' ? f.node : undefined;
      }),
      `${id} RUNNING`,
    );
    const node: Node = running;
    const ed = (await vscode.commands.executeCommand('wick.describe', node)) as vscode.TextEditor;
    await within(
      10_000,
      textUntil(ed.document, (t) => new RegExp(`ID:\\s+${id}\\nState:\\s+RUNNING\\n`).test(t)),
      'the running app described',
    );

    await vscode.commands.executeCommand('wick.killApplication', node);
    await within(
      60_000,
      until(s, (m) =>
        apps(m.state).find((a) => a.id === id)?.state === 'KILLED' ? true : undefined,
      ),
      `${id} KILLED`,
    );
    // The open description follows the state it describes.
    await within(
      10_000,
      textUntil(ed.document, (t) => /State:\s+KILLED\n/.test(t)),
      'the description updated to KILLED',
    );

    const errors = new Answering(api.host, 'showErrorMessage', () => undefined);
    const original = api.host.showQuickPick;
    const offered: DescribeChoice[][] = [];
    api.host.showQuickPick = (<T extends vscode.QuickPickItem>(items: readonly T[]) => {
      offered.push([...items] as unknown as DescribeChoice[]);
      return Promise.resolve(items[0]);
    }) as typeof api.host.showQuickPick;
    try {
      await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
      // What the row's menu hands the command once the view forgot the element (the app's row
      // moved to the collapsed Completed group): VS Code resolves the row's handle to undefined.
      const again = (await vscode.commands.executeCommand('wick.describe', undefined)) as
        | vscode.TextEditor
        | undefined;
      assert.deepEqual(
        errors.shown.map((e) => e.message),
        [],
        'no error',
      );
      assert.equal(offered.length, 1, 'asked which item');
      assert.deepEqual(offered[0]?.[0]?.target, { kind: 'app', id }, 'the app that ended first');
      assert.ok(again, 'a description opened');
      assert.match(again.document.getText(), new RegExp(`ID:\\s+${id}\\nState:\\s+KILLED\\n`));
      await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
    } finally {
      errors.restore();
      api.host.showQuickPick = original;
    }
  });
}
