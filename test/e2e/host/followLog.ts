/**
 * Logs as a user expects them: a followed log's editor keeps its end in view as lines arrive
 * (and stops once the user scrolls up), its tab names the executor, and "Show Merged Log" shows
 * an application's driver and executor lines in one document, each tagged with its source.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import * as vscode from 'vscode';
import { children, findApp, type Node } from '../../../extension/tree/model.js';
import { type Api, apps, nextChange, step, submit, textUntil, until, within } from './helpers.js';

/** Resolves once `pred` holds of the editor's visible ranges (they follow the window's drawing). */
function rangesUntil(ed: vscode.TextEditor, pred: () => boolean, what: () => string) {
  // Generous: a window starved of CPU (CI, 2 cores, beside other work) was seen drawing nothing
  // for 15 s while lines kept coming.
  return within(
    45_000,
    new Promise<void>((resolve) => {
      if (pred()) return resolve();
      const subs = [
        vscode.window.onDidChangeTextEditorVisibleRanges((e) => {
          if (e.textEditor === ed && pred()) done();
        }),
        vscode.workspace.onDidChangeTextDocument((e) => {
          if (e.document === ed.document && pred()) done();
        }),
      ];
      const done = () => {
        for (const s of subs) s.dispose();
        resolve();
      };
    }),
    what,
  );
}

const visibleEnd = (ed: vscode.TextEditor) =>
  ed.visibleRanges[ed.visibleRanges.length - 1]?.end.line ?? -1;

export async function followLogSteps(api: Api, root: string): Promise<void> {
  const s = api.session;

  await step(
    'a followed log stays scrolled to its end, and stops when the user scrolls up',
    async () => {
      // A job that writes its executor's log at a steady pace (two lines per 100 ms task), so
      // that the editor can be seen at the end between arrivals, and a busy window is not asked
      // to redraw faster than it can.
      const dir = mkdtempSync(join(tmpdir(), 'wick-e2e-follow-'));
      const file = join(dir, 'steady.ts');
      writeFileSync(
        file,
        [
          "import { WickContext } from 'wick';",
          "const wc = await WickContext.create({ appName: 'steady lines' });",
          'await wc',
          '  .range(0, 2000, 1, 2000)',
          '  .map((x: number): number => {',
          '    const t = Date.now();',
          '    while (Date.now() - t < 100) {}',
          '    return x;',
          '  })',
          '  .reduce((a: number, b: number) => a + b);',
          'await wc.stop();',
          '',
        ].join('\n'),
      );
      // What the follow decided, for the failure's message.
      const decisions: string[] = [];
      const r = await submit({ file, args: [], deployMode: 'client', maxCores: 1 });
      assert.ok(r?.success && r.appId, JSON.stringify(r));
      const appId = r.appId as string;
      const trace = api.follow.trace;
      api.follow.trace = (m) => {
        decisions.push(`${new Date().toISOString().slice(11, 23)} ${m}`);
        trace(m);
      };
      try {
        await until(s, (m) =>
          apps(m.state)
            .find((a) => a.id === appId)
            ?.executors.some((e) => e.state === 'RUNNING')
            ? true
            : undefined,
        );
        const appNode = findApp(appId, s.model())?.node as Node;
        const exec = children(appNode, s.model()).find((n) => n.kind === 'executor');
        assert.ok(exec, `an executor of ${appId}`);
        const ed = (await vscode.commands.executeCommand(
          'wick.showStdout',
          exec,
        )) as vscode.TextEditor;
        const doc = ed.document;
        const id = (exec as Extract<Node, { kind: 'executor' }>).exec.id;
        // The tab's title: the app's name (as the tree calls it), then its ids.
        const name = apps(s.state).find((a) => a.id === appId)?.name;
        assert.equal(
          posix.basename(doc.uri.path),
          `${name} · ${appId}\u2215${id} stdout`,
          'the tab title',
        );
        // Enough lines that the end is off the first screen.
        await within(
          60_000,
          textUntil(doc, () => doc.lineCount > 120),
          () => `120 lines in the log (${doc.lineCount})`,
        );
        for (let i = 0; i < 3; i++) {
          await within(20_000, nextChange(doc), 'more lines');
          // The end as it is now comes into view. (Not "the end, whenever it is": lines arrive
          // every 100 ms, and a busy window draws less often than that, so the view can follow
          // without ever being seen at the very last line.)
          const last = doc.lineCount - 1;
          await rangesUntil(
            ed,
            () => visibleEnd(ed) >= last,
            () =>
              `the visible range's end (${visibleEnd(ed)}) at line ${last}, the end then (the cursor on line ${ed.selection.active.line}, the editor ${vscode.window.visibleTextEditors.includes(ed) ? 'visible' : 'hidden'}, ${api.follow.follows(ed) ? 'following' : 'not following'}; the follow's decisions: ${decisions.slice(-8).join(' | ') || 'none'})`,
          );
          assert.ok(ed.selection.active.line >= last, 'the cursor at the end');
        }
        // The user scrolls up to read: the editor stays there while lines keep coming.
        ed.selection = new vscode.Selection(10, 0, 10, 0);
        ed.revealRange(new vscode.Range(10, 0, 10, 0), vscode.TextEditorRevealType.AtTop);
        await rangesUntil(
          ed,
          // (AtTop leaves a few lines of context above the line.)
          () => (ed.visibleRanges[0]?.start.line ?? 99) <= 10,
          () => `scrolled up (visible from ${ed.visibleRanges[0]?.start.line})`,
        );
        const top = ed.visibleRanges[0]?.start.line;
        const linesThen = doc.lineCount;
        await within(
          20_000,
          textUntil(doc, () => doc.lineCount > linesThen + 20),
          'more lines',
        );
        assert.equal(ed.visibleRanges[0]?.start.line, top, 'still where the user scrolled');
        assert.ok(visibleEnd(ed) < doc.lineCount - 1, 'the end is out of view');
        // (Not "still on line 10": a busy VS Code may apply new text as one whole-document edit,
        // which moves any cursor to the start; only the follow must not take it to the end.)
        assert.ok(ed.selection.active.line < doc.lineCount - 2, 'the cursor not taken to the end');
        await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
      } finally {
        api.follow.trace = trace;
        await api.session.client.sendRequest('wick/kill', { id: appId }).catch(() => undefined);
      }
    },
  );

  await step(
    "one merged view of an app's driver and executor logs, each line tagged with its source",
    async () => {
      const r = await submit({
        file: join(root, 'examples', 'pi.ts'),
        args: ['20'],
        deployMode: 'cluster',
        name: 'merged',
      });
      assert.ok(r?.success && r.appId && r.driverId, JSON.stringify(r));
      const ed = (await vscode.commands.executeCommand('wick.showMergedLog', {
        appId: r.appId,
        driverId: r.driverId,
      })) as vscode.TextEditor | undefined;
      assert.ok(ed, 'Show Merged Log opened a document');
      const doc = ed.document;
      assert.equal(doc.uri.scheme, 'wick-merged');
      const text = await within(
        90_000,
        textUntil(
          doc,
          (t) =>
            /^\[driver\] Pi is roughly 3\.\d+$/m.test(t) &&
            /^\[exec \d+\] .*Finished task/m.test(t),
        ),
        () => `driver and executor lines (${doc.getText().slice(0, 600)})`,
      );
      const [head, ...lines] = text.trimEnd().split('\n');
      assert.match(
        head as string,
        /^\[Logs of app-\S+, merged: lines in the order they reached VS Code/,
      );
      for (const l of lines) assert.match(l, /^\[(driver|exec \d+)( stderr)?\] /, l);
      await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
    },
  );

  await step(
    "client mode: the merged view has the driver's own output, tagged [driver]",
    async () => {
      const r = await submit({
        file: join(root, 'examples', 'pi.ts'),
        args: ['4'],
        deployMode: 'client',
        name: 'merged client',
      });
      assert.ok(r?.success && r.appId, JSON.stringify(r));
      const ed = (await vscode.commands.executeCommand('wick.showMergedLog', {
        appId: r.appId,
      })) as vscode.TextEditor | undefined;
      assert.ok(ed, 'Show Merged Log opened a document');
      const doc = ed.document;
      await within(
        90_000,
        textUntil(
          doc,
          (t) =>
            /^\[driver\] Pi is roughly 3\.\d+$/m.test(t) &&
            /^\[exec \d+\] .*Finished task/m.test(t),
        ),
        () => `the driver's output and executor lines (${doc.getText().slice(0, 600)})`,
      );
      await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
    },
  );
}
