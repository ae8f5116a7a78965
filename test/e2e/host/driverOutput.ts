/**
 * The editor loop of issue 18, in the real extension host: a submit's driver output is a
 * document that "Show Logs" and the app's "driver output" row open (client and cluster mode); a
 * job that throws gets an error notification (answered through the Host seam) and a Problems
 * entry; a syntax error at submit gets one at its line, gone when the fixed file is submitted.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { DriverOutputs, DriverRun } from '../../../extension/output/driverOutputs.js';
import { failureOf } from '../../../extension/output/outcome.js';
import type { RunReports } from '../../../extension/output/runReports.js';
import { children, findApp, item, type Node } from '../../../extension/tree/model.js';
import {
  Answering,
  type Api,
  apps,
  figures,
  type Shown,
  step,
  submit,
  textUntil,
  until,
  within,
} from './helpers.js';
import { RecordingProgress } from './progress.js';

type OutputApi = Api & { outputs: DriverOutputs; reports: RunReports };
type Submitted = Awaited<ReturnType<typeof submit>> & { outputId?: string };

/** Resolves once `uri`'s Problems entries satisfy `pred` (now or after a change). */
function diagnosticsUntil(
  uri: vscode.Uri,
  pred: (d: readonly vscode.Diagnostic[]) => boolean,
): Promise<readonly vscode.Diagnostic[]> {
  return new Promise((resolve) => {
    const check = () => {
      const d = vscode.languages.getDiagnostics(uri);
      if (!pred(d)) return false;
      resolve(d);
      return true;
    };
    if (check()) return;
    const sub = vscode.languages.onDidChangeDiagnostics((e) => {
      if (e.uris.some((u) => u.toString() === uri.toString()) && check()) sub.dispose();
    });
  });
}

function exited(api: OutputApi, id: string): Promise<DriverRun> {
  return new Promise((resolve) => {
    const run = api.outputs.get(id);
    if (run?.exit) return resolve(run);
    const sub = api.outputs.onDidExit((r) => {
      if (r.id === id) {
        sub.dispose();
        resolve(r);
      }
    });
  });
}

function activeEditor(pred: (e: vscode.TextEditor) => boolean): Promise<vscode.TextEditor> {
  return new Promise((resolve) => {
    const now = vscode.window.activeTextEditor;
    if (now && pred(now)) return resolve(now);
    const sub = vscode.window.onDidChangeActiveTextEditor((e) => {
      if (e && pred(e)) {
        sub.dispose();
        resolve(e);
      }
    });
  });
}

export async function driverOutputSteps(base: Api, root: string): Promise<void> {
  const api = base as OutputApi;
  const s = api.session;
  const pi = join(root, 'examples', 'pi.ts');
  let piApp = '';
  let piOutput: vscode.Uri | undefined;

  await step(
    'the driver output of a submitted Pi holds "Pi is roughly"; Show Logs opens it; the submit shows its phases as progress',
    async () => {
      const info = new Answering(api.host, 'showInformationMessage', (m) =>
        m.items.includes('Show Logs') ? 'Show Logs' : undefined,
      );
      const progress = new RecordingProgress(api.host);
      try {
        const opened = activeEditor((e) => e.document.uri.scheme === 'wick-output');
        const r = (await submit({ file: pi, args: ['4'], deployMode: 'client' })) as Submitted;
        assert.ok(r.success && r.appId && r.outputId, JSON.stringify(r));
        piApp = r.appId as string;
        // The phases, in order, under the submit's title: the agent's, from the driver's own
        // report that its bundle is done (backend/app/driver/launcherReport.ts).
        const phases = progress.shown.find((p) => p.title === 'Running pi.ts on Wick');
        assert.ok(phases, `no "Running pi.ts on Wick" progress: ${JSON.stringify(progress.shown)}`);
        const bundling = phases.messages.indexOf('Bundling pi.ts…');
        assert.ok(bundling >= 0, JSON.stringify(phases.messages));
        assert.ok(
          phases.messages.indexOf('Starting the driver…') > bundling,
          JSON.stringify(phases.messages),
        );
        // The same notification goes on (executors, the job's counts) until the app ends.
        assert.equal(
          progress.shown.filter((p) => p.title === 'Running pi.ts on Wick').length,
          1,
          'one notification for the submit and its job',
        );
        await within(60_000, phases.ended, 'the notification ending with the app');
        const offer = await within(
          10_000,
          info.next((m) => m.items.includes('Show Logs')),
          'the offer',
        );
        assert.doesNotMatch(offer.message, /\/tmp|driver output:/, 'the toast names no file');
        const doc = (await within(30_000, opened, 'the driver output opened by "Show Logs"'))
          .document;
        assert.match(doc.uri.path, new RegExp(`^/Wick: .+ \\(${piApp}\\)$`));
        assert.equal(
          doc.uri.toString(),
          api.outputs.uri(api.outputs.get(r.outputId as string) as DriverRun).toString(),
        );
        const text = await within(
          60_000,
          textUntil(
            doc,
            (t) => /Pi is roughly 3\./.test(t) && /\[the driver exited with status 0\]\n$/.test(t),
          ),
          () => `"Pi is roughly" and the exit in the document (${doc.getText().slice(-300)})`,
        );
        // stderr (the driver's log lines) and stdout, both.
        assert.match(text, /INFO .*StandaloneAppClient/);
        piOutput = doc.uri;
        await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
      } finally {
        progress.restore();
        info.restore();
      }
    },
  );

  await step('the app has a "driver output" row, which opens the same document', async () => {
    assert.ok(piApp && piOutput, 'the previous step submitted Pi');
    const found = await within(
      30_000,
      until(s, (m) => findApp(piApp, m)),
      `${piApp} in the Applications view`,
    );
    const row = children(found.node, s.model()).find((n: Node) => n.kind === 'output');
    assert.ok(
      row,
      `a driver output row among ${children(found.node, s.model()).map((n) => n.kind)}`,
    );
    const it = item(row, s.model());
    assert.equal(it.label, 'driver output');
    assert.ok(it.command);
    const opened = activeEditor((e) => e.document.uri.toString() === piOutput?.toString());
    await vscode.commands.executeCommand(it.command.command, ...(it.command.arguments ?? []));
    await within(10_000, opened, 'the driver output opened from the tree row');
    await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
  });

  await step(
    "cluster mode: the driver's output on its worker streams into the document",
    async () => {
      const info = new Answering(api.host, 'showInformationMessage', () => undefined);
      try {
        const r = (await submit({ file: pi, args: ['2'], deployMode: 'cluster' })) as Submitted;
        assert.ok(r.success && r.driverId && r.outputId, JSON.stringify(r));
        const run = await within(90_000, exited(api, r.outputId as string), 'the driver ending');
        assert.match(run.text, /Pi is roughly 3\./, run.text.slice(-1000));
        assert.match(run.exit?.reason ?? '', /ended FINISHED/);
        // The run's end comes to the user with its answer, the output one click away.
        const ended = await within(
          30_000,
          info.next((m) => /^Wick: .+ finished: .*Pi is roughly 3\./.test(m.message)),
          () => `the end notification with the answer (shown: ${JSON.stringify(info.shown)})`,
        );
        assert.deepEqual(ended.items, ['Show Output']);
      } finally {
        info.restore();
      }
    },
  );

  await step('a job that throws: an error notification and a Problems entry', async () => {
    const fixture = join(root, 'test', 'fixtures', 'apps', 'throws-in-task.ts');
    const errors = new Answering(api.host, 'showErrorMessage', (m) =>
      m.message.startsWith('Wick: Throws In Task failed:') ? 'Go to Source' : undefined,
    );
    try {
      const atSource = activeEditor((e) => e.document.uri.fsPath === fixture);
      const r = (await submit({ file: fixture, args: [], deployMode: 'client' })) as Submitted;
      assert.ok(r.success && r.appId, JSON.stringify(r));
      const shown: Shown = await within(
        90_000,
        errors.next((m) => m.message.startsWith('Wick: Throws In Task failed:')),
        () => `the failure notification (shown: ${JSON.stringify(errors.shown)})`,
      );
      assert.match(shown.message, /task failed on purpose/);
      assert.ok(shown.items.includes('Show Output'), JSON.stringify(shown));
      // And where the user glances: the status bar, until the next submit.
      assert.match(s.statusBar.text, /\$\(error\) Throws In Task FAILED$/);
      assert.match(
        s.statusBar.tooltip,
        /Last run: Throws In Task failed: .*task failed on purpose/,
      );
      const app = apps(s.state).find((a) => a.id === r.appId);
      const failure = failureOf(app);
      const run = api.outputs.get(r.outputId as string) as DriverRun;
      assert.notEqual(run.exit?.code, 0, 'the driver exited non-zero');
      const uri = vscode.Uri.file(fixture);
      const [d] = await within(
        10_000,
        diagnosticsUntil(uri, (x) => x.length > 0),
        'a Problems entry',
      );
      assert.ok(d);
      assert.equal(d.severity, vscode.DiagnosticSeverity.Error);
      assert.equal(d.source, 'wick');
      assert.match(d.message, /task failed on purpose/);
      // Line 8 throws. With the backend's source-mapped failure (issue 18, helper A) the entry is
      // on it; before that the stack points into the bundle, and the entry names the file at line 1.
      const mapped = failure?.location !== undefined || /throws-in-task\.ts:8:/.test(run.text);
      if (failure?.location) {
        assert.equal(app?.state, 'FAILED');
        assert.equal(failure.location.file, fixture);
        assert.equal(failure.location.line, 8);
      }
      assert.equal(d.range.start.line, mapped ? 7 : 0, `${d.message} at ${d.range.start.line + 1}`);
      // Which way the report found the line, for the run's report.
      figures.throwingJobProblemLine = d.range.start.line + 1;
      figures.throwingJobLocatedByMaster = failure?.location ? 1 : 0;
      assert.ok(shown.items.includes('Go to Source'), JSON.stringify(shown));
      const editor = await within(10_000, atSource, 'the fixture opened by "Go to Source"');
      assert.equal(editor.selection.active.line, d.range.start.line);
      await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
    } finally {
      errors.restore();
    }
  });

  await step(
    'a syntax error at submit: the submit fails saying so, a Problems entry at its line, cleared on the next submit',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'wick-e2e-syntax-'));
      const file = join(dir, 'bad-syntax.ts');
      writeFileSync(file, "import { WickContext } from 'wick';\nconst x = (1;\n");
      const errors = new Answering(api.host, 'showErrorMessage', (m) =>
        m.items.includes('Go to Source') ? 'Go to Source' : undefined,
      );
      const info = new Answering(api.host, 'showInformationMessage', () => undefined);
      try {
        const atSource = activeEditor((e) => e.document.uri.fsPath === file);
        const r = (await submit({ file, args: [], deployMode: 'client' })) as Submitted;
        assert.equal(r.success, false, JSON.stringify(r));
        const shown = await within(
          10_000,
          errors.next((m) => m.message.startsWith('Wick: Submitting bad-syntax.ts failed:')),
          () => `the failure notification (shown: ${JSON.stringify(errors.shown)})`,
        );
        assert.match(shown.message, /Syntax error in bad-syntax\.ts:2:/);
        const uri = vscode.Uri.file(file);
        const [d] = await within(
          10_000,
          diagnosticsUntil(uri, (x) => x.length > 0),
          'a Problems entry',
        );
        assert.equal(d?.range.start.line, 1);
        assert.match(d?.message ?? '', /Expected "\)" but found ";"/);
        // "Go to Source" opens the file at the error.
        const editor = await within(10_000, atSource, 'the file opened by "Go to Source"');
        assert.equal(editor.selection.active.line, 1);
        await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
        // Fixed and submitted again: the entry goes (before the new run's own verdict).
        writeFileSync(
          file,
          "import { WickContext } from 'wick';\n\nconst wc = await WickContext.create({ appName: 'fixed' });\nawait wc.stop();\n",
        );
        const cleared = diagnosticsUntil(uri, (x) => x.length === 0);
        const again = (await submit({ file, args: [], deployMode: 'client' })) as Submitted;
        assert.ok(again.success, JSON.stringify(again));
        await within(10_000, cleared, 'the Problems entry cleared');
        const run = await within(
          60_000,
          exited(api, again.outputId as string),
          'the fixed run ending',
        );
        assert.equal(run.exit?.code, 0, run.text.slice(-1000));
      } finally {
        errors.restore();
        info.restore();
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
}
