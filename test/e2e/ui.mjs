// The UI flow through the workbench in Chromium, as a user would: open the Wick view (the local
// cluster starts), see two ALIVE workers, Submit Job… on examples/pi.ts from the command palette,
// watch it complete, open the executor's stdout; submit a job that runs until killed, kill it from
// its context menu and confirm, see it KILLED; open the dashboard from the status bar and read the
// cluster inside its webview, move to its Workers page and find it there again after a reload.
// Screenshots of each stage go to test-output/e2e/screenshots; on a failure, failure.png and
// failure-aria.yml (the accessibility tree, as text) show what was there.
// Elements are found by role and accessible name, as a screen reader would find them.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const long = { timeout: 60_000 };

export async function runUi(page, url, shots) {
  mkdirSync(shots, { recursive: true });
  let stage = 'start';
  const t0 = Date.now();
  const shot = async (name) => {
    stage = name;
    await page.screenshot({ path: join(shots, `${name}.png`) });
    // Where the time goes, for a run that is slow on a busy machine.
    console.log(`ui: ${name} at ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  };
  try {
    await flow(page, url, shot);
  } catch (err) {
    await page.screenshot({ path: join(shots, 'failure.png') }).catch(() => {});
    const aria = await page
      .locator('body')
      .ariaSnapshot({ timeout: 5_000 })
      .catch((e) => `(no accessibility snapshot: ${e.message})`);
    writeFileSync(join(shots, 'failure-aria.yml'), aria);
    throw new Error(
      `UI flow failed after stage "${stage}" (see ${join(shots, 'failure.png')} and failure-aria.yml): ${err.message}`,
      { cause: err },
    );
  }
}

async function flow(page, url, shot) {
  await page.goto(url, { waitUntil: 'domcontentloaded' });
  const wick = page.locator('.part.activitybar [aria-label^="Wick"]').first();
  await wick.waitFor(long);
  await wick.click();
  const cluster = page.getByRole('tree', { name: 'Cluster' });
  const apps = page.getByRole('tree', { name: 'Applications' });
  const workers = cluster.getByRole('treeitem', { name: /^Worker worker-\S+ .*State: ALIVE/ });
  await workers.nth(1).waitFor(long);
  assert.equal(await workers.count(), 2, 'two ALIVE workers in the Cluster view');
  const status = page.getByRole('button', { name: /Wick ALIVE · 2 workers/ });
  await status.waitFor(long);
  await shot('1-cluster-two-workers');

  await openFile(page, 'pi.ts');
  // 200 tasks: long enough that both executors run some, whichever registers first.
  await submitActiveFile(page, { args: '200', beforeLast: () => shot('2-submit-quick-input') });
  // pi.ts finishes in about a second: wait for it under Completed, then open it there.
  const completed = apps.getByRole('treeitem', { name: /^Completed [1-9]/ });
  await completed.waitFor(long);
  await shot('3-app-completed');
  await expand(completed);
  const pi = apps.getByRole('treeitem', { name: /^Wick Pi \(app-\S+\) State: FINISHED/ });
  await pi.waitFor(long);
  await expand(pi);
  const exec = apps.getByRole('treeitem', { name: /^Executor 0 of app-/ });
  await exec.waitFor(long);
  await expand(exec);
  await apps.getByRole('treeitem', { name: /^stdout of app-\S+\/0/ }).click();
  await page
    .locator('.monaco-editor .view-lines', { hasText: 'Running task' })
    .first()
    .waitFor(long);
  await shot('4-executor-stdout');

  // The context menu's when-clauses: a finished app offers Copy ID but no Kill.
  await pi.click({ button: 'right' });
  const menu = page.getByRole('menu');
  await menu.getByRole('menuitem', { name: 'Copy ID' }).waitFor(long);
  assert.equal(
    await menu.getByRole('menuitem', { name: 'Kill Application' }).count(),
    0,
    'a FINISHED app offers no Kill Application',
  );
  await page.keyboard.press('Escape');
  await menu.waitFor({ state: 'hidden', ...long });

  // Kill through the workbench: a job that runs until killed, Running → context menu → confirm.
  await openFile(page, 'until-killed.ts');
  await submitActiveFile(page, { args: '' });
  const running = apps.getByRole('treeitem', { name: /^until killed \(app-\S+\) State: RUNNING/ });
  await running.waitFor(long);
  const appId = /\((app-\S+)\)/.exec(await running.getAttribute('aria-label'))?.[1];
  assert.ok(appId, 'the running app names its id');
  // Submit reveals the new application: its row is the selected one, open on its executors.
  await apps
    .getByRole('treeitem', { name: new RegExp(`^until killed \\(${appId}\\)`), selected: true })
    .waitFor(long);
  await expand(running);
  const executors = apps.getByRole('treeitem', {
    name: new RegExp(`^Executor \\d+ of ${appId} .*State: RUNNING`),
  });
  await executors.first().waitFor(long);
  await shot('5-app-running');
  await running.click({ button: 'right' });
  const kill = menu.getByRole('menuitem', { name: 'Kill Application' });
  await kill.waitFor(long);
  await shot('6-kill-context-menu');
  await kill.click();
  const dialog = page.getByRole('dialog').filter({ hasText: `Kill application ${appId}?` });
  await dialog.waitFor(long);
  await shot('7-kill-confirm');
  await dialog.getByRole('button', { name: 'Kill', exact: true }).click();
  await dialog.waitFor({ state: 'hidden', ...long });
  const killed = apps.getByRole('treeitem', {
    name: new RegExp(`^until killed \\(${appId}\\) State: KILLED`),
  });
  await expand(apps.getByRole('treeitem', { name: /^Completed [1-9]/ }));
  await killed.waitFor(long);
  assert.equal(
    await apps.getByRole('treeitem', { name: /^Running \d/ }).getAttribute('aria-label'),
    'Running 0',
  );
  await shot('8-app-killed');

  // The dashboard, opened by the status bar item; its content is in the webview's nested iframes.
  await status.click();
  await page.getByRole('tab', { name: /Wick Dashboard/ }).waitFor(long);
  const dash = page.frameLocator('iframe.webview.ready').frameLocator('#active-frame');
  await dash.getByRole('heading', { level: 1, name: /^Wick Master at wick:\/\// }).waitFor(long);
  const aliveRows = dash
    .getByRole('table', { name: 'Workers' })
    .getByRole('row', { name: /ALIVE/ });
  await aliveRows.nth(1).waitFor(long);
  assert.equal(await aliveRows.count(), 2, 'the dashboard lists two ALIVE workers');
  // The chart has the history from before the panel opened: the cores the killed job held.
  await dash.getByRole('img', { name: /Now: 0 of 4 cores .*Peak: 4 cores/ }).waitFor(long);
  await dash.getByText('No application is running.').waitFor(long);
  const done = dash.getByRole('table', { name: 'Completed applications' });
  await done
    .getByRole('row', { name: new RegExp(`^${appId} until killed .* KILLED`) })
    .waitFor(long);
  await done.getByRole('row', { name: /^app-\S+ Wick Pi .* FINISHED/ }).waitFor(long);
  await shot('9-dashboard');
  await done.scrollIntoViewIfNeeded();
  await shot('10-dashboard-completed-apps');

  // A link moves the panel; a reload of the window brings the panel back on that page (its
  // WebviewPanelSerializer, and the route the page kept in its webview state).
  await dash
    .getByRole('navigation', { name: 'Dashboard' })
    .getByRole('link', { name: 'Workers' })
    .click();
  await dash.getByRole('heading', { level: 1, name: 'Workers' }).waitFor(long);
  // Developer: Reload Window, as a user reloads: the workbench saves its state first (a bare
  // page reload can cut that save short, and then not even the editor tabs come back).
  await page.keyboard.press('F1');
  await page.keyboard.type('Developer: Reload Window');
  await page
    .locator('.quick-input-list')
    .getByRole('option', { name: /Developer: Reload Window/ })
    .first()
    .waitFor(long);
  const reloaded = page.waitForEvent('framenavigated', {
    predicate: (f) => f === page.mainFrame(),
    ...long,
  });
  await page.keyboard.press('Enter');
  await reloaded;
  await page.getByRole('tab', { name: /Wick Dashboard/ }).waitFor(long);
  const again = page.frameLocator('iframe.webview.ready').frameLocator('#active-frame');
  await again.getByRole('heading', { level: 1, name: 'Workers' }).waitFor(long);
  await again
    .getByRole('table', { name: 'Workers' })
    .getByRole('row', { name: /ALIVE/ })
    .nth(1)
    .waitFor(long);
  await shot('11-dashboard-restored-after-reload');
}

/** Quick Open (Ctrl+P) a workspace file by name, and wait for its editor tab. */
async function openFile(page, name) {
  await page.keyboard.press('Control+P');
  await page.keyboard.type(name);
  await page
    .locator('.quick-input-list')
    .getByRole('option', { name: new RegExp(`^${literal(name)}`) })
    .first()
    .waitFor(long);
  await page.keyboard.press('Enter');
  await page.getByRole('tab', { name: new RegExp(`^${literal(name)}`) }).waitFor(long);
}

/** Wick: Submit Job… from the palette on the active editor's file: four questions, defaults but args. */
async function submitActiveFile(page, { args, beforeLast }) {
  await page.keyboard.press('F1');
  await page.keyboard.type('Wick: Submit Job');
  await page
    .locator('.quick-input-list')
    .getByRole('option', { name: /Wick: Submit Job…/ })
    .first()
    .waitFor(long);
  await page.keyboard.press('Enter');
  const title = page.locator('.quick-input-title');
  await title.filter({ hasText: 'arguments' }).waitFor(long);
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Backspace');
  await page.keyboard.type(args);
  await page.keyboard.press('Enter');
  for (const step of ['deploy mode', 'executor memory', 'cores per executor']) {
    await title.filter({ hasText: step }).waitFor(long);
    // A pick's Enter before its items are listed accepts nothing, which ends the questions.
    if (step === 'deploy mode')
      await page
        .locator('.quick-input-list')
        .getByRole('option', { name: /^(client|cluster)/ })
        .first()
        .waitFor(long);
    if (step === 'cores per executor') await beforeLast?.();
    await page.keyboard.press('Enter');
  }
  await title.waitFor({ state: 'hidden', ...long });
}

async function expand(treeitem) {
  await treeitem.waitFor(long);
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
