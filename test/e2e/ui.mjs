// The UI flow through the workbench in Chromium, as a user would: open the Wick view (the local
// cluster starts), see two ALIVE workers, Submit Job… on examples/pi.ts from the command palette,
// watch it complete, open the executor's stdout; submit a job that runs until killed, kill it from
// its context menu and confirm, see it KILLED; open the dashboard from the status bar and read the
// cluster inside its webview, move to its Workers page and find it there again after a reload,
// and the runs from before the reload still in the Applications view.
// Elements are found by role and accessible name, as a screen reader would find them.
//
// The flow is a list of steps, each with a budget in seconds, sized for a loaded 2-core machine: a
// step that does not finish within it fails, naming itself and what it waited for, whatever wait
// inside it hung, so the whole flow ends within the sum of its budgets. Each step's screenshot goes
// to test-output/e2e/screenshots (with the time it took); a failed step leaves failure.png and
// failure-aria.yml (the accessibility tree, as text) of the moment it failed.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Every step's budget, in seconds: the flow's own bound (test/e2e/vscode.test.ts adds them up). */
export const UI_STEPS = [
  // The workbench loads, the extension activates and starts a local cluster of two workers.
  ['1-cluster-two-workers', 120],
  ['2-pi-submitted', 90],
  ['3-app-completed', 45],
  ['4-executor-stdout', 30],
  ['4b-finished-app-menu', 20],
  ['5-app-running', 60],
  ['6-kill-context-menu', 20],
  ['7-kill-confirm', 20],
  ['8-app-killed', 30],
  ['9-dashboard', 45],
  ['10-dashboard-completed-apps', 15],
  ['10b-dashboard-workers-page', 20],
  // A reload restarts the workbench, the extension host, the agent and so the local cluster, and
  // only then can the restored panel show the cluster: about a minute on a loaded 2-core machine.
  ['11-dashboard-restored-after-reload', 150],
  // The reload's new cluster lists the earlier one's runs, from the agent's records.
  ['12-runs-kept-after-reload', 60],
];

export async function runUi(page, url, shots) {
  mkdirSync(shots, { recursive: true });
  const t0 = Date.now();
  const budgets = new Map(UI_STEPS);
  let current = { name: 'start', started: t0, budget: 0 };
  const step = async (name, fn) => {
    const budget = budgets.get(name);
    if (budget === undefined) throw new Error(`step "${name}" has no budget in UI_STEPS`);
    current = { name, started: Date.now(), budget };
    // No single wait of the step may outlast the step; its own timeout error names what it
    // waited for. The step's timer, a little later, ends whatever else could hang.
    page.setDefaultTimeout(budget * 1000);
    let timer;
    const late = new Promise((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`it did not finish within its budget of ${budget} s`)),
        budget * 1000 + 5_000,
      );
    });
    try {
      await Promise.race([fn(), late]);
    } finally {
      clearTimeout(timer);
    }
    await page.screenshot({ path: join(shots, `${name}.png`), timeout: 15_000 });
    const took = ((Date.now() - current.started) / 1000).toFixed(1);
    const at = ((Date.now() - t0) / 1000).toFixed(1);
    console.log(`ui: ${name} in ${took} s of its ${budget} s (at ${at} s)`);
  };
  try {
    await flow(page, url, step);
  } catch (err) {
    const took = ((Date.now() - current.started) / 1000).toFixed(1);
    await page.screenshot({ path: join(shots, 'failure.png'), timeout: 15_000 }).catch(() => {});
    const aria = await page
      .locator('body')
      .ariaSnapshot({ timeout: 5_000 })
      .catch((e) => `(no accessibility snapshot: ${e.message})`);
    writeFileSync(join(shots, 'failure-aria.yml'), aria);
    // CI keeps only the failure summary, not the files: the views and messages go in it too.
    throw new Error(
      `UI step "${current.name}" failed after ${took} s (budget ${current.budget} s; see ${join(shots, 'failure.png')} and failure-aria.yml): ${err.message}\n${await whatShows(page)}`,
      { cause: err },
    );
  }
}

async function flow(page, url, step) {
  const cluster = page.getByRole('tree', { name: 'Cluster' });
  const apps = page.getByRole('tree', { name: 'Applications' });
  const status = page.getByRole('button', { name: /Wick ALIVE · 2 workers/ });
  const menu = page.getByRole('menu');
  await step('1-cluster-two-workers', async () => {
    await page.goto(url, { waitUntil: 'domcontentloaded' });
    const wick = page.locator('.part.activitybar [aria-label^="Wick"]').first();
    await wick.click();
    const workers = cluster.getByRole('treeitem', { name: /^Worker worker-\S+ .*State: ALIVE/ });
    await workers.nth(1).waitFor();
    assert.equal(await workers.count(), 2, 'two ALIVE workers in the Cluster view');
    await status.waitFor();
  });

  await openFile(page, 'pi.ts', step, '2-pi-submitted', async () => {
    // 200 tasks: long enough that both executors run some, whichever registers first.
    await submitActiveFile(page, { args: '200' });
  });
  // pi.ts finishes in about a second: wait for it under Completed, then open it there.
  const pi = apps.getByRole('treeitem', { name: /^Wick Pi \(app-\S+\) State: FINISHED/ });
  await step('3-app-completed', async () => {
    const completed = apps.getByRole('treeitem', { name: /^Completed [1-9]/ });
    await completed.waitFor();
    await expand(completed);
    await pi.waitFor();
  });
  await step('4-executor-stdout', async () => {
    await expand(pi);
    const exec = apps.getByRole('treeitem', { name: /^Executor 0 of app-/ });
    await exec.waitFor();
    await expand(exec);
    await apps.getByRole('treeitem', { name: /^stdout of app-\S+\/0/ }).click();
    await page.locator('.monaco-editor .view-lines', { hasText: 'Running task' }).first().waitFor();
  });

  // The context menu's when-clauses: a finished app offers Copy ID but no Kill.
  await step('4b-finished-app-menu', async () => {
    await pi.click({ button: 'right' });
    await menu.getByRole('menuitem', { name: 'Copy ID' }).waitFor();
    assert.equal(
      await menu.getByRole('menuitem', { name: 'Kill Application' }).count(),
      0,
      'a FINISHED app offers no Kill Application',
    );
    await page.keyboard.press('Escape');
    await menu.waitFor({ state: 'hidden' });
  });

  // Kill through the workbench: a job that runs until killed, Running → context menu → confirm.
  const running = apps.getByRole('treeitem', { name: /^until killed \(app-\S+\) State: RUNNING/ });
  let appId;
  await openFile(page, 'until-killed.ts', step, '5-app-running', async () => {
    await submitActiveFile(page, { args: '' });
    await running.waitFor();
    appId = /\((app-\S+)\)/.exec(await running.getAttribute('aria-label'))?.[1];
    assert.ok(appId, 'the running app names its id');
    // Submit reveals the new application: its row is the selected one, open on its executors.
    await apps
      .getByRole('treeitem', { name: new RegExp(`^until killed \\(${appId}\\)`), selected: true })
      .waitFor();
    await expand(running);
    await apps
      .getByRole('treeitem', { name: new RegExp(`^Executor \\d+ of ${appId} .*State: RUNNING`) })
      .first()
      .waitFor();
  });
  const kill = menu.getByRole('menuitem', { name: 'Kill Application' });
  await step('6-kill-context-menu', async () => {
    await running.click({ button: 'right' });
    await kill.waitFor();
  });
  const dialog = page.getByRole('dialog').filter({ hasText: `Kill application ${appId}?` });
  await step('7-kill-confirm', async () => {
    await kill.click();
    await dialog.waitFor();
  });
  await step('8-app-killed', async () => {
    await dialog.getByRole('button', { name: 'Kill', exact: true }).click();
    await dialog.waitFor({ state: 'hidden' });
    const killed = apps.getByRole('treeitem', {
      name: new RegExp(`^until killed \\(${appId}\\) State: KILLED`),
    });
    await expand(apps.getByRole('treeitem', { name: /^Completed [1-9]/ }));
    await killed.waitFor();
    assert.equal(
      await apps.getByRole('treeitem', { name: /^Running \d/ }).getAttribute('aria-label'),
      'Running 0',
    );
  });

  // The dashboard, opened by the status bar item; its content is in the webview's nested iframes.
  const dashboard = () => page.frameLocator('iframe.webview.ready').frameLocator('#active-frame');
  const done = dashboard().getByRole('table', { name: 'Completed applications' });
  await step('9-dashboard', async () => {
    await status.click();
    await page.getByRole('tab', { name: /Wick Dashboard/ }).waitFor();
    const dash = dashboard();
    await dash.getByRole('heading', { level: 1, name: /^Wick Master at wick:\/\// }).waitFor();
    const aliveRows = dash
      .getByRole('table', { name: 'Workers' })
      .getByRole('row', { name: /ALIVE/ });
    await aliveRows.nth(1).waitFor();
    assert.equal(await aliveRows.count(), 2, 'the dashboard lists two ALIVE workers');
    // The chart has the history from before the panel opened: the cores the killed job held.
    await dash.getByRole('img', { name: /Now: 0 of 4 cores .*Peak: 4 cores/ }).waitFor();
    await dash.getByText('No application is running.').waitFor();
    await done.getByRole('row', { name: new RegExp(`^${appId} until killed .* KILLED`) }).waitFor();
    await done.getByRole('row', { name: /^app-\S+ Wick Pi .* FINISHED/ }).waitFor();
  });
  await step('10-dashboard-completed-apps', () => done.scrollIntoViewIfNeeded());

  // A link moves the panel; a reload of the window brings the panel back on that page (its
  // WebviewPanelSerializer, and the route the page kept in its webview state).
  await step('10b-dashboard-workers-page', async () => {
    const dash = dashboard();
    await dash
      .getByRole('navigation', { name: 'Dashboard' })
      .getByRole('link', { name: 'Workers' })
      .click();
    await dash.getByRole('heading', { level: 1, name: 'Workers' }).waitFor();
  });
  await step('11-dashboard-restored-after-reload', async () => {
    // Developer: Reload Window, as a user reloads: the workbench saves its state first (a bare
    // page reload can cut that save short, and then not even the editor tabs come back).
    await runCommand(page, 'Developer: Reload Window');
    const reloaded = page.waitForEvent('framenavigated', {
      predicate: (f) => f === page.mainFrame(),
    });
    await page.keyboard.press('Enter');
    await reloaded;
    // The new extension host starts a new local cluster; the panel shows it once it is up.
    await status.waitFor();
    await page.getByRole('tab', { name: /Wick Dashboard/ }).waitFor();
    const again = dashboard();
    await again.getByRole('heading', { level: 1, name: 'Workers' }).waitFor();
    await again
      .getByRole('table', { name: 'Workers' })
      .getByRole('row', { name: /ALIVE/ })
      .nth(1)
      .waitFor();
  });
  // The Applications view after the reload: the runs of the cluster before it, as they ended.
  await step('12-runs-kept-after-reload', async () => {
    // The view's own focus command, not the activity bar icon: the icon toggles, and the sidebar
    // the reload restored may still be drawing the Wick views, so a click could close it.
    await runCommand(page, 'Wick: Focus on Applications View');
    await page.keyboard.press('Enter');
    await expand(apps.getByRole('treeitem', { name: /^Completed [1-9]/ }));
    await apps
      .getByRole('treeitem', { name: /^Wick Pi \(app-\S+\) State: FINISHED .*earlier session/ })
      .first()
      .waitFor();
    await apps
      .getByRole('treeitem', {
        name: new RegExp(`^until killed \\(${appId}\\) State: KILLED .*earlier session`),
      })
      .waitFor();
  });
}

/** The Wick views, the quick input and the notifications at the moment of a failure, as text. */
async function whatShows(page) {
  const parts = [];
  const regions = [
    ['Cluster view', page.getByRole('tree', { name: 'Cluster' })],
    ['Applications view', page.getByRole('tree', { name: 'Applications' })],
    ['quick input', page.locator('.quick-input-widget')],
    ['notifications', page.locator('.notifications-toasts.visible')],
  ];
  for (const [name, region] of regions) {
    const text =
      (await region.count()) === 0
        ? '(not shown)'
        : await region
            .first()
            .ariaSnapshot({ timeout: 3_000 })
            .catch((e) => `(unreadable: ${e.message.split('\n')[0]})`);
    parts.push(`--- ${name}:\n${text.split('\n').slice(0, 40).join('\n')}`);
  }
  return parts.join('\n');
}

/** F1, the command typed, and its row in the palette (Enter is the caller's). */
async function runCommand(page, title) {
  const option = page
    .locator('.quick-input-list')
    .getByRole('option', { name: new RegExp(literal(title)) })
    .first();
  await quickInput(page, 'F1', `>${title}`, option);
}

/** Quick Open (Ctrl+P) a workspace file by name and wait for its editor tab, then `then`, as one step. */
async function openFile(page, name, step, stepName, then) {
  await step(stepName, async () => {
    const tab = page.getByRole('tab', { name: new RegExp(`^${literal(name)}`) });
    const row = page
      .locator('.quick-input-list .monaco-list-row.focused')
      .filter({ hasText: name })
      .first();
    // Enter only once the file's row is the focused one; a file that did not open is asked for
    // once more (ci-c: no tab within 60 s after an Enter, once in dozens of runs).
    for (let attempt = 1; ; attempt++) {
      await quickInput(page, 'Control+P', name, row);
      await page.keyboard.press('Enter');
      try {
        await tab.waitFor({ timeout: attempt === 1 ? 20_000 : 60_000 });
        break;
      } catch (err) {
        if (attempt > 1) throw err;
        console.log(`  ${name} did not open from Quick Open; asking again`);
        await page.keyboard.press('Escape');
      }
    }
    await then();
  });
}

/**
 * Opens the quick input with `key` and puts `text` in it whole (fill, not keystrokes: typed at a
 * widget still opening, keys were lost, and ci-a's palette read ">dow" for "Developer: Reload
 * Window"), then waits for `shown`; once more if it does not show.
 */
async function quickInput(page, key, text, shown) {
  const box = page.locator('.quick-input-widget .quick-input-box input');
  for (let attempt = 1; ; attempt++) {
    await page.keyboard.press(key);
    await box.waitFor();
    await box.fill(text);
    try {
      await shown.waitFor({ timeout: attempt === 1 ? 20_000 : 60_000 });
      return;
    } catch (err) {
      if (attempt > 1) throw err;
      console.log(`  the quick input did not show what ${JSON.stringify(text)} asks for; again`);
      await page.keyboard.press('Escape');
    }
  }
}

/** Wick: Submit Job… from the palette on the active editor's file: four questions, defaults but args. */
async function submitActiveFile(page, { args }) {
  await runCommand(page, 'Wick: Submit Job…');
  await page.keyboard.press('Enter');
  const title = page.locator('.quick-input-title');
  await title.filter({ hasText: 'arguments' }).waitFor();
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Backspace');
  await page.keyboard.type(args);
  await page.keyboard.press('Enter');
  for (const step of ['deploy mode', 'executor memory', 'cores per executor']) {
    await title.filter({ hasText: step }).waitFor();
    // A pick's Enter before its items are listed accepts nothing, which ends the questions.
    if (step === 'deploy mode')
      await page
        .locator('.quick-input-list')
        .getByRole('option', { name: /^(client|cluster)/ })
        .first()
        .waitFor();
    await page.keyboard.press('Enter');
  }
  await title.waitFor({ state: 'hidden' });
}

async function expand(treeitem) {
  await treeitem.waitFor();
  // The extension may expand it at the same moment (it reveals a submitted app), and the click
  // then collapse it again: click until it stays expanded.
  for (let attempt = 0; attempt < 5; attempt++) {
    if ((await treeitem.getAttribute('aria-expanded')) !== 'false') return;
    await treeitem.click();
    for (let i = 0; i < 20 && (await treeitem.getAttribute('aria-expanded')) === 'false'; i++)
      await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error(`${await treeitem.getAttribute('aria-label')} would not stay expanded`);
}

/** A RegExp source that matches s as written. */
function literal(s) {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
