/**
 * A project a user can start from, in the real VS Code and its TypeScript: a file importing 'wick'
 * in a bare folder gets the offer and Problems entries; the set-up clears them; New Job writes a
 * job the editor's TypeScript knows (its mistakes are reported at their line, nothing else) and
 * that runs; Get Started opens the walkthrough.
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { Answering, type Api, apps, figures, step, submit, until, within } from './helpers.js';

/** Resolves with the file's diagnostics once `pred` holds for them (now or after a change). */
function diagnosticsUntil(
  uri: vscode.Uri,
  pred: (d: vscode.Diagnostic[]) => boolean,
): Promise<vscode.Diagnostic[]> {
  return new Promise((resolve) => {
    const now = vscode.languages.getDiagnostics(uri);
    if (pred(now)) return resolve(now);
    const sub = vscode.languages.onDidChangeDiagnostics((e) => {
      if (!e.uris.some((u) => u.toString() === uri.toString())) return;
      const d = vscode.languages.getDiagnostics(uri);
      if (pred(d)) {
        sub.dispose();
        resolve(d);
      }
    });
  });
}

const describe = (d: vscode.Diagnostic[]) =>
  d.map((x) => `${x.range.start.line + 1}: ${x.message}`).join('; ') || 'none';

export async function projectSteps(api: Api, root: string): Promise<void> {
  await step(
    "a file importing 'wick' in a bare folder: the offer, Problems, and Set Up clears them",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'wick-e2e-bare-'));
      const file = vscode.Uri.file(join(dir, 'pi.ts'));
      copyFileSync(join(root, 'examples', 'pi.ts'), file.fsPath);
      const info = new Answering(api.host, 'showInformationMessage', (s) =>
        /imports 'wick'/.test(s.message) ? 'Not Now' : undefined,
      );
      try {
        await vscode.window.showTextDocument(file);
        const offer = await within(
          30_000,
          info.next((s) => /imports 'wick'/.test(s.message)),
          () => 'the offer to set up types',
        );
        assert.deepEqual(offer.items, ['Set Up', 'Not Now', "Don't Ask Again"]);
        // The editor's own TypeScript, as the user sees it in Problems.
        const before = await within(
          120_000,
          diagnosticsUntil(file, (d) => d.some((x) => /Cannot find module 'wick'/.test(x.message))),
          () =>
            `TypeScript to report the missing 'wick' (now: ${describe(vscode.languages.getDiagnostics(file))})`,
        );
        figures.bareFolderErrors = before.length;
        await vscode.commands.executeCommand('wick.setUpTypes', vscode.Uri.file(dir));
        await within(
          120_000,
          diagnosticsUntil(file, (d) => d.length === 0),
          () =>
            `the errors to clear after Set Up (now: ${describe(vscode.languages.getDiagnostics(file))})`,
        );
      } finally {
        info.restore();
        await vscode.commands.executeCommand('workbench.action.closeAllEditors');
      }
    },
  );

  await step(
    'New Job writes a typed job: TypeScript knows Wick (a mistake at its line, nothing else) and it runs',
    async () => {
      const dir = vscode.Uri.file(mkdtempSync(join(tmpdir(), 'wick-e2e-job-')));
      const uri = (await vscode.commands.executeCommand('wick.newJob', dir, 'job.ts')) as
        | vscode.Uri
        | undefined;
      assert.ok(uri, 'New Job returned the file it wrote');
      assert.equal(vscode.window.activeTextEditor?.document.uri.fsPath, uri.fsPath, 'it is open');
      // A mistake against Wick's API, appended: reported at its line, and it is the only problem.
      const editor = vscode.window.activeTextEditor as vscode.TextEditor;
      const last = editor.document.lineCount;
      await editor.edit((e) =>
        e.insert(new vscode.Position(last, 0), '\nvoid WickContext.create({ appName: 42 });\n'),
      );
      const d = await within(
        120_000,
        diagnosticsUntil(uri, (x) => x.length > 0),
        () => 'TypeScript to check the job',
      );
      assert.equal(d.length, 1, describe(d));
      // Inserted after the file's last line (empty, after its final newline): at index lineCount.
      assert.equal(d[0]?.range.start.line, last);
      assert.match(d[0]?.message ?? '', /Type 'number' is not assignable to type 'string'/);
      await vscode.commands.executeCommand('undo');
      await editor.document.save();
      await within(
        120_000,
        diagnosticsUntil(uri, (x) => x.length === 0),
        () => 'the mistake to clear',
      );
      // And it runs as written.
      const r = await submit({ file: uri.fsPath, args: [], deployMode: 'client' });
      assert.ok(r.success && r.appId, r.message);
      const app = await within(
        120_000,
        until(api.session, (m) =>
          apps(m.state).find((a) => a.id === r.appId && a.state === 'FINISHED'),
        ),
        () => `${r.appId} to finish`,
      );
      assert.equal(app.name, 'job');
      await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    },
  );

  await step('Get Started opens the walkthrough', async () => {
    const labels = () => vscode.window.tabGroups.all.flatMap((g) => g.tabs.map((t) => t.label));
    const walkthrough = (l: string) => /Welcome|Get Started/i.test(l);
    const opened = new Promise<void>((resolve) => {
      const sub = vscode.window.tabGroups.onDidChangeTabs(() => {
        if (labels().some(walkthrough)) {
          sub.dispose();
          resolve();
        }
      });
    });
    await vscode.commands.executeCommand('wick.gettingStarted');
    await within(30_000, opened, () => `the walkthrough's tab (tabs: ${labels().join(', ')})`);
    const ext = vscode.extensions.getExtension('wick.wick');
    assert.equal(ext?.packageJSON.contributes.walkthroughs[0].id, 'wick.gettingStarted');
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });
}
