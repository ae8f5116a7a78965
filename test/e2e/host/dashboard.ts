/**
 * The dashboard panel as a user moves around in it: every tab and link clicked inside the real
 * webview (by run.mjs's page driver: the extension host cannot reach the webview's DOM) moves the
 * page, which says where it is by postMessage (the route the panel records); a screenshot of each
 * page is kept. A tree item opens its page; a hidden panel comes back where it was; a kill from
 * the page asks once, in VS Code's modal naming the app; the heartbeat column is fed live; Open
 * Web UI gives a login link the cluster accepts.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, renameSync, watch, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { DashboardPanel } from '../../../extension/dashboard/dashboardPanel.js';
import { findApp, type Node } from '../../../extension/tree/model.js';
import {
  Answering,
  type Api,
  apps,
  drivers,
  setting,
  step,
  submit,
  until,
  within,
} from './helpers.js';

let nextReq = 0;

/** Asks run.mjs to act on the page (click/count in the dashboard's frame, or a screenshot). */
export async function drive(req: {
  action: 'click' | 'wait' | 'count' | 'shot' | 'popup';
  selector?: string;
  name?: string;
  heading?: string;
}): Promise<{ ok: boolean; error?: string; count?: number; path?: string; url?: string }> {
  const dir = process.env.WICK_E2E_PAGE;
  if (!dir) throw new Error('WICK_E2E_PAGE is not set: run through test/e2e/run.mjs');
  const id = `r${process.pid}-${++nextReq}`;
  const res = join(dir, `${id}.res.json`);
  const answered = new Promise<void>((resolve) => {
    const w = watch(dir, () => {
      if (existsSync(res)) {
        w.close();
        resolve();
      }
    });
  });
  writeFileSync(join(dir, `${id}.tmp`), JSON.stringify(req));
  renameSync(join(dir, `${id}.tmp`), join(dir, `${id}.req.json`));
  await within(45_000, answered, `the page driver's answer to ${JSON.stringify(req)}`);
  const r = JSON.parse(readFileSync(res, 'utf8'));
  if (!r.ok) throw new Error(`page driver: ${r.error}`);
  return r;
}

/** Resolves once the page has said it shows a route that `pred` accepts. */
function routed(panel: DashboardPanel, pred: (hash: string) => boolean, what: string) {
  return within(
    20_000,
    new Promise<string>((resolve) => {
      if (panel.route && pred(panel.route)) return resolve(panel.route);
      const sub = panel.onDidExchange(() => {
        if (panel.route && pred(panel.route)) {
          sub.dispose();
          resolve(panel.route);
        }
      });
    }),
    () => `the page on ${what} (it says ${panel.route})`,
  );
}

/** Clicks `selector` in the page, waits for the route it leads to, and keeps a screenshot. */
async function click(panel: DashboardPanel, selector: string, expect: RegExp, shot: string) {
  await drive({ action: 'click', selector });
  const hash = await routed(panel, (h) => expect.test(h), `${expect} after clicking ${selector}`);
  await drive({ action: 'shot', name: `dashboard-${shot}` });
  return hash;
}

export async function dashboardSteps(api: Api, root: string): Promise<void> {
  const s = api.session;
  let panel: DashboardPanel | undefined;

  await step('every dashboard tab and link navigates inside the panel', async () => {
    panel = (await within(
      15_000,
      vscode.commands.executeCommand('wick.openDashboard'),
      'Wick: Open Dashboard',
    )) as DashboardPanel;
    assert.ok(panel, 'the command returned the panel');
    const p = panel;
    await routed(p, (h) => h === '#/', 'the overview');
    await drive({ action: 'shot', name: 'dashboard-0-overview' });
    await click(p, 'nav a[href="#/workers"]', /^#\/workers$/, '1-workers');
    await click(p, 'nav a[href="#/apps"]', /^#\/apps$/, '2-apps');
    // A finished app with executors: its page links to their workers and logs.
    const app = apps(s.state).find(
      (a) => a.state === 'FINISHED' && a.removedExecutors.length + a.executors.length > 0,
    );
    assert.ok(app, 'a finished application with executors (an earlier step ran Pi)');
    await click(p, `a[href="#/app/${app.id}"]`, new RegExp(`^#/app/${app.id}$`), '3-app');
    const log = await click(p, 'a[href^="#/log?appId="]', /^#\/log\?appId=/, '4-executor-log');
    assert.match(log, new RegExp(`appId=${app.id}&executorId=\\d+&logType=stdout`));
    await click(p, `a[href="#/app/${app.id}"]`, new RegExp(`^#/app/${app.id}$`), '5-back-to-app');
    await click(p, 'a[href^="#/worker/"]', /^#\/worker\/worker-/, '6-worker');
    // The worker's own state (its finished runners), asked of the worker through the agent.
    await drive({ action: 'wait', selector: 'text=Finished Executors' });
    const { count } = await drive({ action: 'count', selector: 'text=could not be read' });
    assert.equal(count, 0, "the worker's own state was read");
    await drive({ action: 'shot', name: 'dashboard-6-worker-state' });
    await click(p, 'nav a[href="#/drivers"]', /^#\/drivers$/, '7-drivers');
    // A driver that ran on a worker (the supervised-driver steps' cluster-mode one) has log links.
    if (drivers(s.state).some((d) => d.workerId)) {
      const dlog = await click(p, 'a[href*="driverId="]', /^#\/log\?driverId=/, '8-driver-log');
      assert.match(dlog, /logType=stdout/);
    }
    await click(p, 'nav a[href="#/"]', /^#\/$/, '9-overview-again');
  });

  await step('a tree item opens its page in the panel', async () => {
    const done = apps(s.state).find((a) => a.state === 'FINISHED');
    assert.ok(done);
    const node = findApp(done.id, s.model())?.node;
    const p = (await vscode.commands.executeCommand('wick.openInDashboard', node)) as
      | DashboardPanel
      | undefined;
    assert.ok(p, 'Open in Dashboard returned the panel');
    assert.equal(p, panel, 'the one panel, moved');
    await routed(p, (h) => h === `#/app/${done.id}`, `the page of ${done.id}`);
    const [master] = api.clusterTree.getChildren();
    const [worker] = api.clusterTree.getChildren(master as Node);
    assert.equal(worker?.kind, 'worker');
    await vscode.commands.executeCommand('wick.openInDashboard', worker);
    const id = (worker as Extract<Node, { kind: 'worker' }>).worker.id;
    await routed(p, (h) => h === `#/worker/${id}`, `the page of ${id}`);
    await drive({ action: 'shot', name: 'dashboard-10-open-in-dashboard-worker' });
  });

  await step('the panel keeps its place when hidden', async () => {
    const p = panel;
    assert.ok(p, 'an earlier step opened the panel');
    await click(p, 'nav a[href="#/drivers"]', /^#\/drivers$/, '11-before-hiding');
    const readyBefore = p.stats.ready;
    // Another editor in the panel's group hides it: its page is thrown away (no retained context).
    const doc = await vscode.workspace.openTextDocument(join(root, 'examples', 'pi.ts'));
    await vscode.window.showTextDocument(doc, { viewColumn: p.panel.viewColumn, preview: false });
    await within(
      10_000,
      new Promise<void>((resolve) => {
        if (!p.panel.visible) return resolve();
        const sub = p.panel.onDidChangeViewState(() => {
          if (!p.panel.visible) {
            sub.dispose();
            resolve();
          }
        });
      }),
      'the panel hidden',
    );
    p.route = undefined;
    p.panel.reveal();
    // A new page loads (a second 'ready') and goes back to where the first one was.
    await within(
      20_000,
      new Promise<void>((resolve) => {
        const ok = () => p.stats.ready > readyBefore && p.route === '#/drivers';
        if (ok()) return resolve();
        const sub = p.onDidExchange(() => {
          if (ok()) {
            sub.dispose();
            resolve();
          }
        });
      }),
      () => `the page reloaded on #/drivers (ready ${p.stats.ready}, route ${p.route})`,
    );
    await drive({ action: 'shot', name: 'dashboard-12-after-hiding' });
  });

  await step("a kill from the panel asks once, in VS Code's modal naming the app", async () => {
    const p = panel;
    assert.ok(p, 'an earlier step opened the panel');
    const r = await submit({
      file: join(root, 'examples', 'pi.ts'),
      args: ['100000'],
      deployMode: 'client',
    });
    assert.ok(r?.success && r.appId, JSON.stringify(r));
    const id = r.appId as string;
    await until(s, (m) =>
      apps(m.state).find((a) => a.id === id)?.state === 'RUNNING' ? true : undefined,
    );
    const warn = new Answering(api.host, 'showWarningMessage', (m) =>
      m.modal ? 'Kill' : undefined,
    );
    try {
      p.navigate('#/apps');
      await routed(p, (h) => h === '#/apps', 'the applications page');
      await drive({ action: 'click', selector: `tr:has(a[href="#/app/${id}"]) .kill` });
      const asked = await within(15_000, warn.next(), 'the kill confirmation');
      assert.equal(asked.message, `Kill application "Wick Pi" (${id})?`);
      assert.ok(asked.modal, 'a modal');
      const { count } = await drive({ action: 'count', selector: 'dialog[open]' });
      assert.equal(count, 0, 'no second confirmation in the page');
      await until(s, (m) =>
        apps(m.state).find((a) => a.id === id)?.state === 'KILLED' ? true : undefined,
      );
      assert.equal(warn.shown.length, 1, 'asked once');
      await drive({ action: 'shot', name: 'dashboard-13-killed' });
    } finally {
      warn.restore();
    }
  });

  await step('the "Last heartbeat" column is fed live', async () => {
    const p = panel;
    assert.ok(p, 'an earlier step opened the panel');
    const before = new Map(s.state?.workers.map((w) => [w.id, w.lastHeartbeat]));
    const delivered = p.stats.delivered;
    // A worker heartbeats every wick.worker.timeout / 4 (15 s by default): within 40 s each is newer.
    await within(
      40_000,
      until(s, (m) =>
        m.state?.workers.every((w) => w.lastHeartbeat > (before.get(w.id) ?? 0)) ? true : undefined,
      ),
      'a newer heartbeat of every worker in the pushed state',
    );
    // The refresh posts it; the webview's acknowledgement comes back later (onDidExchange).
    await within(
      20_000,
      new Promise<void>((resolve) => {
        const sent = () => p.stats.delivered > delivered;
        if (sent()) return resolve();
        const sub = p.onDidExchange(() => {
          if (sent()) {
            sub.dispose();
            resolve();
          }
        });
      }),
      () =>
        `the panel being sent the newer state (delivered ${p.stats.delivered}, before ${delivered})`,
    );
  });

  await step("Open Web UI opens the master's and a worker's UI with a login link", async () => {
    const restore = await setting('ui.openWebUiIn', 'simpleBrowser');
    try {
      const [master] = api.clusterTree.getChildren();
      const [worker] = api.clusterTree.getChildren(master as Node);
      for (const node of [master, worker]) {
        const r = (await vscode.commands.executeCommand('wick.openWebUi', node)) as
          | { url: string; via: string; login: boolean }
          | undefined;
        assert.ok(r, `Open Web UI on the ${node?.kind} answered`);
        assert.equal(r.via, 'simpleBrowser');
        // The local cluster authenticates: the link logs in (once: the Simple Browser may be first).
        assert.equal(r.login, true);
        // In a browser VS Code the address is the workbench's port forwarding of the UI's
        // (vscode.env.asExternalUri: code-server's /proxy/<port>/).
        assert.match(r.url, /^https?:\/\/[^/]+(\/proxy\/\d+)?\/login\?token=/);
        const res = await fetch(r.url);
        const body = await res.text();
        assert.ok(
          res.status === 200 || /used already/.test(body),
          `the cluster accepts the link: ${res.status} ${body.slice(0, 200)}`,
        );
      }
      await drive({ action: 'shot', name: 'dashboard-14-simple-browser' });
    } finally {
      await restore();
    }
  });

  await step("Open Web UI on an application logs in and moves on to the app's page", async () => {
    const restore = await setting('ui.openWebUiIn', 'simpleBrowser');
    try {
      const app = apps(s.state).find((a) => a.state === 'FINISHED');
      assert.ok(app, 'a finished application');
      const r = (await vscode.commands.executeCommand('wick.openWebUi', {
        kind: 'app',
        app,
      })) as { url: string; login: boolean } | undefined;
      assert.ok(r?.login, `a login link: ${JSON.stringify(r)}`);
      const route = `#/app/${app.id}`;
      assert.equal(new URL(r.url).searchParams.get('to'), route);
      // Logged in (the Simple Browser may have used the link first), the page moves on there.
      const res = await fetch(r.url);
      const body = await res.text();
      if (res.status === 200) assert.ok(body.includes(`url=./${route}`), body.slice(0, 300));
      else assert.match(body, /used already/);
    } finally {
      await restore();
    }
  });

  panel?.dispose();
}
