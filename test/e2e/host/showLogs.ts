/**
 * After a submit: the app is revealed and its first executor's stdout (wick.showSubmittedLogs;
 * the toast's "Show Logs" opens the driver output, see driverOutput.ts) follows it to its end;
 * that log, opened with a small
 * `wick.logs.initialBytes`, shows only its tail until "Load Earlier" brings back the rest.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { findApp } from '../../../extension/tree/model.js';
import {
  Answering,
  type Api,
  apps,
  endedAfter,
  endedNote,
  nextChange,
  selectionUntil,
  setting,
  step,
  submit,
  textUntil,
  until,
  within,
  workFile,
} from './helpers.js';

const INITIAL_BYTES = 256;

export async function showLogsSteps(api: Api, root: string): Promise<void> {
  const s = api.session;
  let doc: vscode.TextDocument | undefined;
  const restoreInitial = await setting('logs.initialBytes', INITIAL_BYTES);

  await step(
    "after Submit Job the app is revealed, and its executor's stdout opens and follows to its end",
    async () => {
      const info = new Answering(api.host, 'showInformationMessage', () => undefined);
      try {
        const opened = new Promise<vscode.TextEditor>((resolve) => {
          const sub = vscode.window.onDidChangeActiveTextEditor((e) => {
            if (e?.document.uri.scheme === 'wick-log') {
              sub.dispose();
              resolve(e);
            }
          });
        });
        const r = await submit({
          file: join(root, 'examples', 'pi.ts'),
          args: ['20'],
          deployMode: 'client',
          // One executor, so that the log Show Logs opens is the one that runs every task (with
          // two, the first to register may queue all of a short job before the other arrives).
          maxCores: 1,
        });
        assert.ok(r?.success && r.appId, `submitted: ${JSON.stringify(r)}`);
        const appId = r.appId as string;
        const offer = await within(
          10_000,
          info.next((m) => m.items.includes('Show Logs')),
          'the offer',
        );
        assert.match(offer.message, new RegExp(appId));
        void vscode.commands.executeCommand('wick.showSubmittedLogs', { appId });
        const editor = await within(60_000, opened, "the executor's log");
        doc = editor.document;
        const first = Math.min(
          ...apps(s.state)
            .filter((a) => a.id === appId)
            .flatMap((a) => [...a.executors, ...a.removedExecutors].map((e) => e.id)),
        );
        const name = apps(s.state).find((a) => a.id === appId)?.name;
        assert.equal(
          doc.uri.path,
          `/${name} · ${appId}\u2215${first} stdout`,
          'its tab: <name> · app-…∕0 stdout',
        );
        const selected = () =>
          api.appsView.selection.map((n) => (n.kind === 'app' ? n.app.id : n.kind));
        await selectionUntil(
          api.appsView,
          () => selected().includes(appId),
          10_000,
          () => `${appId} revealed and selected (selection: ${selected()})`,
        ).catch(async (err) => {
          // Why not: a reveal of our own says.
          const found = findApp(appId, s.model());
          const why = await Promise.resolve(
            found && api.appsView.reveal(found.node, { select: true }),
          ).then(
            () => `a reveal by the test worked (found: ${!!found})`,
            (e) => `a reveal by the test failed: ${e}`,
          );
          throw new Error(`${(err as Error).message}; ${why}; visible: ${api.appsView.visible}`);
        });
        // Followed live to the executor's end.
        await within(
          60_000,
          until(s, (m) =>
            apps(m.state).find((a) => a.id === appId)?.state === 'FINISHED' ? true : undefined,
          ),
          `${appId} FINISHED`,
        );
        // The selection follows the app into Completed.
        const selectedFinished = () =>
          api.appsView.selection.some(
            (n) => n.kind === 'app' && n.app.id === appId && n.app.state === 'FINISHED',
          );
        await selectionUntil(
          api.appsView,
          selectedFinished,
          10_000,
          () =>
            `${appId} selected in Completed (selection: ${api.appsView.selection.map((n) => (n.kind === 'app' ? `${n.app.id} ${n.app.state}` : n.kind))})`,
        );
        const d = doc;
        let text = await within(
          30_000,
          textUntil(d, endedNote),
          () => `the log saying its process exited (${api.logs.describe(d.uri)})`,
        );
        // A fast executor may have written more than initialBytes before the log opened: then
        // it opened with only the tail, and the earlier bytes come back with Load Earlier.
        for (let loads = 0; text.startsWith('[… '); loads++) {
          if (loads > 1000) throw new Error('Load Earlier never reached the start of the log');
          const changed = nextChange(d);
          await vscode.commands.executeCommand('wick.loadEarlierLog');
          await within(10_000, changed, `the log after load ${loads + 1}`);
          text = d.getText();
        }
        const appWorkDir = await workFile(s, appId);
        const disk = readFileSync(join(appWorkDir, String(first), 'stdout'), 'utf8');
        // Should this fail: what the document holds, the file, and how each executor ended.
        const why = () => {
          const app = apps(s.state).find((a) => a.id === appId);
          const execs = [...(app?.executors ?? []), ...(app?.removedExecutors ?? [])].map(
            (e) => `${e.id} ${e.state}${e.exitStatus === undefined ? '' : ` (${e.exitStatus})`}`,
          );
          const stderr = (id: string) => {
            try {
              return readFileSync(join(appWorkDir, id, 'stderr'), 'utf8').slice(-1500);
            } catch (err) {
              return `(${(err as Error).message})`;
            }
          };
          const failed = (app?.removedExecutors ?? []).filter((e) => e.exitStatus !== 0);
          return `document: ${api.logs.describe(d.uri)}; file: ${disk.length} bytes; executors: ${execs.join(', ')}${failed.map((e) => `\n--- stderr of executor ${e.id}:\n${stderr(String(e.id))}`).join('')}`;
        };
        let ended: string;
        try {
          ended = endedAfter(text, disk);
        } catch (err) {
          throw new Error(`${(err as Error).message}; ${why()}`);
        }
        assert.equal(ended, 'process exited', why());
        assert.match(text, /Executor: Finished task/, why());
        await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
      } finally {
        info.restore();
      }
    },
  );

  await step(
    '"Load Earlier" brings back the bytes before the tail, none lost or repeated',
    async () => {
      assert.ok(doc, 'the previous step opened a log');
      // Its stderr, never opened yet, so that it opens now with the small initialBytes.
      const { source } = JSON.parse((doc as vscode.TextDocument).uri.query) as {
        source: { appId: string; execId: number };
      };
      const appId = source.appId;
      const execId = String(source.execId);
      const app = apps(s.state).find((a) => a.id === appId);
      const exec = [...(app?.executors ?? []), ...(app?.removedExecutors ?? [])].find(
        (e) => e.id === Number(execId),
      );
      assert.ok(exec, `executor ${appId}/${execId} among the app's ended executors`);
      const disk = readFileSync(
        await workFile(s, appId as string, execId as string, 'stderr'),
        'utf8',
      );
      assert.ok(
        disk.length > 3 * INITIAL_BYTES,
        `the log (${disk.length} bytes) must be longer than a few initialBytes (${INITIAL_BYTES})`,
      );
      const editor = (await vscode.commands.executeCommand('wick.showStderr', {
        kind: 'executor',
        exec,
        under: 'app',
      })) as vscode.TextEditor;
      const d = editor.document;
      assert.match(d.getText(), /^\[… \d+ earlier bytes/, 'opened with only the tail');
      let loads = 0;
      while (d.getText().startsWith('[… ')) {
        const changed = nextChange(d);
        await vscode.commands.executeCommand('wick.loadEarlierLog');
        await within(10_000, changed, `the log after load ${loads + 1}`);
        if (++loads > 1000) throw new Error('Load Earlier never reached the start of the log');
      }
      assert.ok(loads >= 3, `loaded earlier ${loads} times`);
      const ended = await within(10_000, textUntil(d, endedNote), () => api.logs.describe(d.uri));
      assert.equal(endedAfter(ended, disk), 'process exited');
      await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
    },
  );

  await restoreInitial();
}
