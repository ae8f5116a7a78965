/**
 * Multi-select Kill: one Kill Application invocation receiving (node, [node1, node2]) as VS Code
 * passes a selection; the confirmation is answered through the Host seam and the outcome read
 * back from it.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { findApp, item, type Node } from '../../../extension/tree/model.js';
import {
  Answering,
  type Api,
  apps,
  describeApps,
  selectionUntil,
  setting,
  step,
  submit,
  until,
  within,
} from './helpers.js';

export async function multiKillSteps(api: Api, root: string): Promise<void> {
  const s = api.session;
  await step(
    'Kill Application on two selected running apps confirms, kills both, reports',
    async () => {
      const ids: string[] = [];
      // One core each, so that both run at once on the two workers.
      for (let i = 0; i < 2; i++) {
        const r = await submit({
          file: join(root, 'examples', 'pi.ts'),
          args: ['100000'],
          deployMode: 'client',
          maxCores: 1,
        });
        assert.ok(r?.success && r.appId, JSON.stringify(r));
        const id = r.appId as string;
        ids.push(id);
        // Each is selected once it runs; the later submit takes the selection at once, though the
        // earlier app is still followed (it stays RUNNING until killed).
        await selectionUntil(
          api.appsView,
          (sel) =>
            sel.some((n) => n.kind === 'app' && n.app.id === id && n.app.state === 'RUNNING'),
          30_000,
          () =>
            `${id} selected while RUNNING (selection: ${api.appsView.selection.map((n) => (n.kind === 'app' ? `${n.app.id} ${n.app.state}` : n.kind))})`,
        );
      }
      await within(
        60_000,
        until(s, (m) =>
          ids.every((id) => apps(m.state).find((a) => a.id === id)?.state === 'RUNNING')
            ? true
            : undefined,
        ),
        () => `both RUNNING: ${describeApps(s, ids)}`,
      );
      const nodes = ids.map((id) => findApp(id, s.model())?.node as Node);
      const restoreConfirm = await setting('kill.confirm', true);
      let answer: string | undefined;
      const confirm = new Answering(api.host, 'showWarningMessage', (m) =>
        m.items.includes('Kill') ? answer : undefined,
      );
      const report = new Answering(api.host, 'showInformationMessage', () => undefined);
      const errors = new Answering(api.host, 'showErrorMessage', () => undefined);
      try {
        // Dismissed: nothing is killed.
        assert.deepEqual(
          await vscode.commands.executeCommand('wick.killApplication', nodes[1], nodes),
          [],
        );
        const status = await within(10_000, s.status(), 'the agent status');
        for (const id of ids)
          assert.equal(
            apps(status.state).find((a) => a.id === id)?.state,
            'RUNNING',
            `after a dismissed kill: ${describeApps(s, ids)}`,
          );
        answer = 'Kill';
        const results = (await vscode.commands.executeCommand(
          'wick.killApplication',
          nodes[1],
          nodes,
        )) as { success: boolean; message: string }[];
        assert.equal(confirm.shown.length, 2, 'one confirmation per invocation, for the selection');
        const asked = confirm.shown[1];
        assert.ok(asked?.modal, 'the confirmation is modal');
        for (const id of ids) assert.match(asked?.message ?? '', new RegExp(id));
        assert.deepEqual(
          results?.map((r) => r.success),
          [true, true],
          JSON.stringify(results),
        );
        const outcome = await within(10_000, report.next(), 'the outcome report');
        for (const id of ids) assert.match(outcome.message, new RegExp(id));
        assert.deepEqual(errors.shown, []);
      } finally {
        confirm.restore();
        report.restore();
        errors.restore();
        await restoreConfirm();
      }
      await within(
        60_000,
        until(
          s,
          (m) =>
            ids.every((id) => apps(m.state).find((a) => a.id === id)?.state === 'KILLED')
              ? true
              : undefined,
          'render',
        ),
        () => `both KILLED: ${describeApps(s, ids)}`,
      );
      for (const id of ids)
        assert.equal(
          item(findApp(id, s.model())?.node as Node, s.model()).contextValue,
          'wick.app.killed',
        );
    },
  );
}
