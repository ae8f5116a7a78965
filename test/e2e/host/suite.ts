/**
 * Runs inside a real VS Code extension host (code-server), loaded through extensionTestsPath:
 * drives the extension's own commands against a real local cluster started by its agent. Waits
 * are on pushed events (the session's onDidPush/onDidChange, document changes), never on timers.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { DashboardPanel } from '../../../extension/dashboard/dashboardPanel.js';
import { children, findApp, item, type Node } from '../../../extension/tree/model.js';
import { dashboardSteps } from './dashboard.js';
import { debugJobSteps } from './debugJob.js';
import { debugTaskSteps } from './debugTasks.js';
import { describeEndedSteps } from './describeEnded.js';
import { driverOutputSteps } from './driverOutput.js';
import { followLogSteps } from './followLog.js';
import {
  Answering,
  type Api,
  apps,
  figures,
  results,
  step,
  twoAlive,
  until,
  within,
  workFile,
} from './helpers.js';
import { multiKillSteps } from './multiKill.js';
import { failingRunBeforeClusterEnds, pastRunPanelSteps } from './pastRunPanel.js';
import { projectSteps } from './project.js';
import { showLogsSteps } from './showLogs.js';
import { submitLessSteps } from './submitLess.js';
import { supervisedDriverSteps } from './supervisedDriver.js';
import { treeGlanceSteps } from './treeGlance.js';
import { runningWhenClusterEnds, runsKeptSteps, watchJobSteps } from './watchJobs.js';
import { webUiSteps } from './webUi.js';
import { wordCountSteps } from './wordCount.js';

export async function run(): Promise<void> {
  const root = process.env.WICK_E2E_ROOT as string;
  const ext = vscode.extensions.getExtension('wick.wick');
  assert.ok(ext, 'the Wick extension is installed');
  const api = (await ext.activate()) as Api;
  const s = api.session;
  figures.activationMs = api.activationMs;
  // The views must be visible for the tree to read them (and for first use to start the cluster).
  await vscode.commands.executeCommand('workbench.view.extension.wick');
  await vscode.workspace
    .getConfiguration('wick')
    .update('kill.confirm', false, vscode.ConfigurationTarget.Global);

  await step('every command package.json contributes is registered', async () => {
    const registered = new Set(await vscode.commands.getCommands(true));
    const contributed = (ext.packageJSON.contributes.commands as { command: string }[]).map(
      (c) => c.command,
    );
    assert.ok(contributed.length > 0);
    assert.deepEqual(
      contributed.filter((id) => !registered.has(id)),
      [],
      'contributed but not registered: the palette answers "command not found"',
    );
  });

  await step("Show Version shows the extension's and the agent's version", async () => {
    const info = new Answering(api.host, 'showInformationMessage', () => undefined);
    try {
      const v = (await vscode.commands.executeCommand('wick.showVersion')) as {
        extension: string;
        agent?: string;
      };
      const expected = ext.packageJSON.version as string;
      assert.deepEqual(v, { extension: expected, agent: expected });
      const shown = await within(5_000, info.next(), 'the version notification');
      assert.equal(shown.message, `Wick ${expected}; agent ${expected}`);
    } finally {
      info.restore();
    }
  });

  await step('the tree shows two ALIVE workers', async () => {
    await vscode.commands.executeCommand('wick.startLocalCluster');
    await until(
      s,
      (m) => (m.state?.workers.filter((w) => w.state === 'ALIVE').length === 2 ? true : undefined),
      'render',
    );
    const [master] = api.clusterTree.getChildren();
    assert.equal(master?.kind, 'master');
    const workers = api.clusterTree.getChildren(master as Node);
    assert.equal(workers.length, 2);
    for (const w of workers) assert.equal(item(w, s.model()).contextValue, 'wick.worker.alive');
  });

  let piApp = '';
  await step('Submit Job on examples/pi.ts shows the app Running, then Completed', async () => {
    const seen = new Set<string>();
    const watch = s.onDidPush((m) => {
      for (const a of apps(m.state)) if (!piApp || a.id === piApp) seen.add(`${a.id}:${a.state}`);
    });
    const r = (await vscode.commands.executeCommand('wick.submit', {
      file: join(root, 'examples', 'pi.ts'),
      args: ['20'],
      deployMode: 'client',
    })) as { appId?: string; success: boolean; message: string };
    assert.ok(r?.success && r.appId, `submitted: ${JSON.stringify(r)}`);
    piApp = r.appId as string;
    await until(
      s,
      (m) => (apps(m.state).find((a) => a.id === piApp)?.state === 'FINISHED' ? true : undefined),
      'render',
    );
    watch.dispose();
    assert.ok(seen.has(`${piApp}:RUNNING`), `saw RUNNING among ${[...seen].join(', ')}`);
    const found = findApp(piApp, s.model());
    assert.equal(found?.parent.kind === 'group' && found.parent.group, 'completed');
    assert.match(item(found?.node as Node, s.model()).description ?? '', /FINISHED/);
  });

  await step("the executor's stdout opens and holds its task lines", async () => {
    const found = findApp(piApp, s.model());
    const execs = children(found?.node as Node, s.model());
    // A short job can run whole on the executor that registers first, before the other does:
    // open the one whose file (the app has finished) holds task lines.
    const ran: Node[] = [];
    for (const e of execs) {
      if (e.kind !== 'executor') continue;
      const file = await workFile(s, piApp, String(e.exec.id), 'stdout');
      if (/Finished task/.test(readFileSync(file, 'utf8'))) ran.push(e);
    }
    const [exec] = ran;
    assert.ok(exec, `an executor of ${piApp} that ran tasks, among ${execs.length}`);
    const editor = (await vscode.commands.executeCommand(
      'wick.showStdout',
      exec,
    )) as vscode.TextEditor;
    const doc = editor.document;
    const has = () => /Running task/.test(doc.getText()) && /Finished task/.test(doc.getText());
    if (!has())
      await within(
        30_000,
        new Promise<void>((resolve) => {
          const sub = vscode.workspace.onDidChangeTextDocument((e) => {
            if (e.document === doc && has()) {
              sub.dispose();
              resolve();
            }
          });
        }),
        `its task lines in the document (${doc.getText().length} chars so far)`,
      );
    assert.equal(doc.uri.scheme, 'wick-log');
    const lines = doc
      .getText()
      .split('\n')
      .filter((l) => /Executor: (Running|Finished) task/.test(l));
    assert.ok(lines.length >= 2, doc.getText().slice(0, 500));
    await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
  });

  await step('Kill on a long job ends it KILLED', async () => {
    const r = (await vscode.commands.executeCommand('wick.submit', {
      file: join(root, 'examples', 'pi.ts'),
      args: ['100000'],
      deployMode: 'client',
    })) as { appId?: string; success: boolean; message: string };
    assert.ok(r?.success && r.appId, JSON.stringify(r));
    const id = r.appId as string;
    await until(s, (m) =>
      apps(m.state).find((a) => a.id === id)?.state === 'RUNNING' ? true : undefined,
    );
    const found = findApp(id, s.model());
    await vscode.commands.executeCommand('wick.killApplication', found?.node);
    await until(
      s,
      (m) => (apps(m.state).find((a) => a.id === id)?.state === 'KILLED' ? true : undefined),
      'render',
    );
    assert.equal(
      item(findApp(id, s.model())?.node as Node, s.model()).contextValue,
      'wick.app.killed',
    );
  });

  await watchJobSteps(api, root);
  await showLogsSteps(api, root);
  await driverOutputSteps(api, root);
  await multiKillSteps(api, root);
  await supervisedDriverSteps(api, root);
  await projectSteps(api, root);
  await submitLessSteps(api, root);
  await debugJobSteps(api, root);
  await debugTaskSteps(api, root);
  await dashboardSteps(api, root);
  await webUiSteps(api);
  await followLogSteps(api, root);
  await treeGlanceSteps(api, root);
  await wordCountSteps(api, root);
  await describeEndedSteps(api, root);

  await step('state change → tree refreshed (benchmark sample)', async () => {
    // The time from the agent's push of a change to the views having re-read their roots.
    const samples: number[] = [];
    const n = Number(process.env.WICK_E2E_TREE_SAMPLES) || 5;
    for (let i = 0; i < n; i++) {
      const r = (await vscode.commands.executeCommand('wick.submit', {
        file: join(root, 'examples', 'pi.ts'),
        args: ['1'],
        deployMode: 'client',
      })) as { appId?: string };
      const id = r.appId as string;
      // Caught on the push itself, so the render awaited is the one that shows it.
      const { rendered } = await until(s, (m) =>
        apps(m.state).find((a) => a.id === id)?.state === 'FINISHED'
          ? { rendered: api.appsTree.nextRender() }
          : undefined,
      );
      const pushedAt = s.lastPushAt;
      await rendered;
      samples.push(Date.now() - pushedAt);
    }
    samples.sort((a, b) => a - b);
    figures.stateToTreeP50Ms = samples[Math.floor(samples.length / 2)] as number;
    figures.stateToTreeP90Ms = samples[Math.min(n - 1, Math.floor(n * 0.9))] as number;
    figures.stateToTreeSamples = n;
    const { rssBytes } = await within(10_000, s.status(), 'the agent status');
    figures.agentRssMb = Math.round(rssBytes / 1e5) / 10;
  });

  await step('Open Dashboard shows the panel and its webview receives the state', async () => {
    const panel = (await within(
      15_000,
      vscode.commands.executeCommand('wick.openDashboard'),
      'Wick: Open Dashboard',
    )) as DashboardPanel | undefined;
    assert.ok(panel, 'the command returned the panel');
    // 'ready' comes from the webview's own script (so the CSP and nonce let it run); the snapshot
    // it asks for is posted back and accepted.
    const done = () => panel.stats.ready > 0 && panel.stats.delivered > 0;
    if (!done())
      await within(
        30_000,
        new Promise<void>((resolve) => {
          const sub = panel.onDidExchange(() => {
            if (done()) {
              sub.dispose();
              resolve();
            }
          });
        }),
        `the webview's ready and a delivered state (${JSON.stringify(panel.stats)})`,
      );
    assert.equal(panel.panel.title, 'Wick Dashboard');
    panel.dispose();
  });

  // A run whose job failed, then a run running when the agent (and so its local cluster) ends,
  // as a window reload ends them.
  const failedRun = await failingRunBeforeClusterEnds(api, root);
  const endedRun = await runningWhenClusterEnds(api, root);
  const notice = new Answering(api.host, 'showWarningMessage', () => undefined);
  await step('after an agent crash the client restarts it and the tree recovers', async () => {
    const before = await within(10_000, s.status(), 'the agent status');
    const running = new Promise<void>((resolve) => {
      // State.Running (2): the restarted agent is up. Not awaited on a request: the old connection
      // is dead, and requests on it would never answer.
      const sub = api.client.onDidChangeState((e) => {
        if (e.newState === 2) {
          sub.dispose();
          resolve();
        }
      });
    });
    process.kill(before.pid, 'SIGKILL');
    await within(30_000, running, 'the client restarting the agent');
    await within(60_000, until(s, twoAlive, 'render'), 'two ALIVE workers after the restart');
    const after = await within(10_000, s.status(), 'the restarted agent status');
    assert.notEqual(after.pid, before.pid);
    const [master] = api.clusterTree.getChildren();
    const workers = api.clusterTree.getChildren(master as Node);
    assert.equal(workers.length, 2);
    for (const w of workers) assert.equal(item(w, s.model()).contextValue, 'wick.worker.alive');
  });
  await runsKeptSteps(api, endedRun, notice);
  notice.restore();
  // Last: it stops the local cluster, to read a past run's pages with no master at all.
  await pastRunPanelSteps(api, root, failedRun);

  await within(
    20_000,
    vscode.commands.executeCommand('wick.stopLocalCluster'),
    'stopping the local cluster',
  ).catch(() => undefined);
  const report = {
    results,
    figures,
    passed: results.filter((r) => r.ok).length,
    failed: results.filter((r) => !r.ok).length,
  };
  if (process.env.WICK_E2E_REPORT)
    writeFileSync(process.env.WICK_E2E_REPORT, JSON.stringify(report, null, 2));
  if (report.failed) throw new Error(`${report.failed} in-host test(s) failed`);
}
