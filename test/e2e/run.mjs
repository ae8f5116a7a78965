#!/usr/bin/env node
// Wick's tests in a real VS Code: the in-host suite (test/e2e/host, run through
// extensionTestsPath) and the UI flow (test/e2e/ui.mjs), against a real local cluster that the
// extension's agent starts. Exit 77 = skipped (code-server not installed and not in CI).
// Usage: node test/e2e/run.mjs [host|ui|vsix]... [--exit-with-parent]   (after npm run build)
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  watch,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { installed, openBrowser, startCodeServer, workbenchUrl } from './codeServer.mjs';

const root = resolve(import.meta.dirname, '../..');
const out = join(root, 'test-output', 'e2e');
const parts = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const which = parts.length ? parts : ['host', 'ui', 'vsix'];
/** The code-server running now, for an exit that cannot wait for the usual stop. */
let current;
// Run by a test whose process may be killed (a timeout): stdin is a pipe from it, and when that
// closes this ends too, with the code-server it started (its own process group) and Chromium
// (which leaves when this process does).
if (process.argv.includes('--exit-with-parent')) {
  process.stdin.on('data', () => {});
  process.stdin.once('end', () => {
    console.error('run.mjs: the test that started it is gone; stopping');
    if (current?.pid) {
      try {
        process.kill(-current.pid, 'SIGKILL');
      } catch {}
      rmSync(current.tmp, { recursive: true, force: true });
    }
    process.exit(1);
  });
}

if (!installed()) {
  const r = spawnSync(join(root, 'test/e2e/install.sh'), { stdio: 'inherit' });
  if (r.status !== 0 || !installed()) {
    if (process.env.CI) {
      console.error('code-server could not be installed (see above)');
      process.exit(1);
    }
    console.error(
      'SKIP: code-server is not installed and could not be (run test/e2e/install.sh; needs libkrb5-dev and chromium)',
    );
    process.exit(77);
  }
}
mkdirSync(out, { recursive: true });
// Screenshots of an earlier run would pass for this one's.
rmSync(join(out, 'screenshots'), { recursive: true, force: true });

let failed = 0;
for (const what of which) {
  const vsix = what === 'vsix' ? join(root, 'wick.vsix') : undefined;
  if (vsix) spawnSync('npm', ['run', 'package'], { cwd: root, stdio: 'inherit' });
  // The packaged extension opens a new user's empty folder (the walkthrough writes a job there).
  const folder = vsix ? mkdtempSync(join(tmpdir(), 'wick-e2e-user-')) : root;
  const cs = await startCodeServer(folder, vsix);
  current = cs;
  try {
    if (what === 'host') failed += await hostTests(cs);
    else if (what === 'vsix') failed += await vsixCheck(cs, folder);
    else failed += await ui(cs);
  } catch (err) {
    console.error(err);
    console.error(cs.log().slice(-3000));
    keepLogs(cs, what);
    failed++;
  } finally {
    await cs.stop();
    if (folder !== root) rmSync(folder, { recursive: true, force: true });
  }
}
process.exit(failed ? 1 : 0);

/**
 * The workbench's logs of a failed part (the extension host's, the Wick output channel's) into
 * test-output/e2e/logs-PART, and the end of Wick's channel on stderr: what the extension and its
 * agent were doing when a step gave up.
 */
function keepLogs(cs, what) {
  const from = join(cs.tmp, 'ud', 'logs');
  const to = join(out, `logs-${what}`);
  try {
    rmSync(to, { recursive: true, force: true });
    cpSync(from, to, { recursive: true });
    for (const f of readdirSync(to, { recursive: true }))
      if (/(Wick|exthost)\.log$/.test(String(f)))
        console.error(`${f} (end):\n${readFileSync(join(to, String(f)), 'utf8').slice(-4000)}`);
    console.error(`the workbench's logs are in ${to}`);
  } catch (err) {
    console.error(`no workbench logs kept: ${err.message}`);
  }
}

/** Closes the browser, or gives up on it after 15 s (a page stuck mid-navigation can hang close). */
async function closeBrowser(ctx) {
  let timer;
  await Promise.race([
    ctx.close().catch(() => {}),
    new Promise((r) => {
      timer = setTimeout(r, 15_000);
    }),
  ]);
  clearTimeout(timer);
}

async function hostTests(cs) {
  const report = join(out, 'host-report.json');
  const pageDir = join(out, 'page-driver');
  rmSync(report, { force: true });
  const remote = (p) => `vscode-remote://${cs.host}${p}`;
  const payload = [
    ['extensionDevelopmentPath', remote(root)],
    ['extensionTestsPath', remote(join(root, 'dist/e2e/host-tests.cjs'))],
    [
      'extensionEnvironment',
      JSON.stringify({
        WICK_E2E_ROOT: root,
        WICK_E2E_REPORT: report,
        WICK_E2E_TREE_SAMPLES: process.env.WICK_E2E_TREE_SAMPLES ?? '5',
        // While working on a few steps: a regular expression; the other steps do not run.
        ...(process.env.WICK_E2E_ONLY ? { WICK_E2E_ONLY: process.env.WICK_E2E_ONLY } : {}),
        WICK_E2E_PAGE: pageDir,
        ...(process.env.WICK_E2E_DAP_LOG ? { WICK_E2E_DAP_LOG: process.env.WICK_E2E_DAP_LOG } : {}),
      }),
    ],
  ];
  const { ctx, page } = await openBrowser(cs.tmp);
  const stopDriving = drivePage(page, pageDir);
  try {
    const exited = new Promise((r) => page.exposeFunction('codeAutomationExit', (code) => r(code)));
    // Generous: on a loaded machine the workbench's first page can take more than the 30 s default.
    await page.goto(workbenchUrl(cs.host, root, payload), {
      waitUntil: 'domcontentloaded',
      timeout: 120_000,
    });
    // Bounded: a suite that hangs fails here instead of hanging `npm test`.
    let timer;
    const code = await Promise.race([
      exited,
      new Promise((r) => {
        timer = setTimeout(() => r('timeout (600 s)'), 600_000);
      }),
    ]);
    clearTimeout(timer);
    let text = '';
    try {
      text = readFileSync(report, 'utf8');
    } catch {}
    console.log(text || '(no report)');
    // No report: the suite itself failed (activation, an import), and only the host's log says why.
    if (!text) {
      console.error(cs.log().slice(-3000));
      for (const f of readdirSync(join(cs.tmp, 'ud', 'logs'), { recursive: true }))
        if (/exthost\.log$/.test(String(f)))
          console.error(
            `${f}:\n${readFileSync(join(cs.tmp, 'ud', 'logs', String(f)), 'utf8').slice(-6000)}`,
          );
    }
    console.log(`in-host tests exited with ${code}`);
    return code === 0 ? 0 : 1;
  } finally {
    stopDriving();
    await closeBrowser(ctx);
  }
}

/**
 * What the in-host steps cannot do from the extension host: click inside a webview and take a
 * screenshot of the workbench. A step writes <id>.req.json into `dir` ({ action: 'click',
 * selector }, { action: 'wait', selector } or { action: 'count', selector } in the dashboard's frame,
 * { action: 'popup', heading, name } for a tab the workbench opened, or { action: 'shot', name });
 * this answers <id>.res.json.
 */
/**
 * The dashboard's frame: the shown webview's (a hidden one, a panel opened earlier and not
 * disposed, keeps its iframe in the page).
 */
function dashboardFrame(page) {
  return page.frameLocator('iframe.webview.ready:visible').frameLocator('#active-frame');
}

function drivePage(page, dir) {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const shots = join(out, 'screenshots');
  const seen = new Set();
  const answer = async (file) => {
    const id = file.replace(/\.req\.json$/, '');
    let res;
    try {
      const req = JSON.parse(readFileSync(join(dir, file), 'utf8'));
      if (req.action === 'click') {
        const frame = dashboardFrame(page);
        await frame.locator(req.selector).first().click({ timeout: 30_000 });
        res = { ok: true };
      } else if (req.action === 'wait') {
        const frame = dashboardFrame(page);
        await frame.locator(req.selector).first().waitFor({ timeout: 30_000 });
        res = { ok: true };
      } else if (req.action === 'count') {
        const frame = dashboardFrame(page);
        res = { ok: true, count: await frame.locator(req.selector).count() };
      } else if (req.action === 'popup') {
        // A tab the workbench opened (vscode.env.openExternal in a browser VS Code): the newest
        // page of the browser other than the workbench, once it shows `heading`.
        const deadline = Date.now() + 30_000;
        let other = page
          .context()
          .pages()
          .filter((p) => p !== page)
          .at(-1);
        while (!other && Date.now() < deadline) {
          other = await page
            .context()
            .waitForEvent('page', { timeout: Math.max(1, deadline - Date.now()) })
            .catch(() => undefined);
        }
        if (!other) throw new Error('no tab was opened beside the workbench within 30 s');
        await other
          .getByRole('heading', { name: new RegExp(req.heading) })
          .first()
          .waitFor({ timeout: 30_000 });
        mkdirSync(shots, { recursive: true });
        const path = join(shots, `${String(req.name).replace(/[^\w.-]/g, '_')}.png`);
        await other.screenshot({ path });
        res = { ok: true, url: other.url(), path };
        await other.close();
      } else if (req.action === 'shot') {
        mkdirSync(shots, { recursive: true });
        const path = join(shots, `${String(req.name).replace(/[^\w.-]/g, '_')}.png`);
        await page.screenshot({ path });
        res = { ok: true, path };
      } else {
        res = { ok: false, error: `unknown action ${JSON.stringify(req.action)}` };
      }
    } catch (err) {
      res = { ok: false, error: String(err?.message ?? err) };
    }
    writeFileSync(join(dir, `${id}.res.tmp`), JSON.stringify(res));
    renameSync(join(dir, `${id}.res.tmp`), join(dir, `${id}.res.json`));
  };
  const watcher = watch(dir, (_, f) => {
    const file = String(f ?? '');
    if (!file.endsWith('.req.json') || seen.has(file) || !existsSync(join(dir, file))) return;
    seen.add(file);
    void answer(file);
  });
  return () => watcher.close();
}

async function ui(cs) {
  const { runUi } = await import('./ui.mjs');
  const { ctx, page } = await openBrowser(cs.tmp);
  try {
    const payload = [['extensionDevelopmentPath', `vscode-remote://${cs.host}${root}`]];
    await runUi(page, workbenchUrl(cs.host, root, payload), join(out, 'screenshots'));
    return 0;
  } finally {
    await closeBrowser(ctx);
  }
}

/** The packaged VSIX, installed into code-server, works with default settings: two ALIVE workers. */
/**
 * The packaged extension as a new user meets it, in an empty folder: the cluster comes up when
 * the Wick view opens, then the walkthrough is clicked through — its first step ticked because
 * the cluster is up, New Job from its button, Run on Wick from its button (with the Welcome page
 * active, where the submit questions used to close by themselves), the job FINISHED in the tree.
 */
async function vsixCheck(cs, folder) {
  const { ctx, page } = await openBrowser(cs.tmp);
  const shots = join(out, 'screenshots');
  mkdirSync(shots, { recursive: true });
  const long = { timeout: 120_000 };
  let stage = 'the workbench';
  try {
    await page.goto(workbenchUrl(cs.host, folder), { waitUntil: 'domcontentloaded', ...long });
    const wick = page.locator('.part.activitybar [aria-label^="Wick"]').first();
    await wick.waitFor(long);
    await wick.click();
    stage = 'two ALIVE workers';
    await page
      .locator('.part.sidebar .monaco-list-row', { hasText: /ALIVE · \d+\/\d+ cores/ })
      .nth(1)
      .waitFor(long);
    await page
      .locator('.statusbar-item', { hasText: /Wick ALIVE · 2 workers/ })
      .first()
      .waitFor(long);
    await page.screenshot({ path: join(shots, '0-vsix-installed.png') });

    stage = 'the walkthrough opened';
    await page.keyboard.press('F1');
    await page.keyboard.type('Welcome: Open Walkthrough');
    await page.locator('.quick-input-list').getByRole('option').first().waitFor(long);
    await page.keyboard.press('Enter');
    await page
      .locator('.quick-input-list')
      .getByRole('option', { name: /Get Started with Wick/ })
      .first()
      .waitFor(long);
    await page.keyboard.type('Get Started with Wick');
    await page.keyboard.press('Enter');
    // The walkthrough's page (the editor title's own Run on Wick is outside it).
    const walk = page.locator('.gettingStartedContainer');
    stage = 'step 1 ticked: the cluster is up';
    await walk.getByRole('checkbox', { name: 'Start a local cluster: Completed' }).waitFor(long);
    assert.equal(await walk.getByText('`').count(), 0, 'no raw backticks in the walkthrough');

    stage = 'New Job from its button';
    await walk
      .getByRole('button', { name: /Create a job/ })
      .first()
      .click();
    await walk.getByRole('button', { name: 'New Job', exact: true }).click();
    await page.locator('.quick-input-title', { hasText: 'New Job' }).waitFor(long);
    await page.keyboard.press('Enter');
    await page.getByRole('tab', { name: /^job\.ts/ }).waitFor(long);

    stage = 'Run on Wick from its button, the Welcome page active';
    await page.getByRole('tab', { name: /^Welcome/ }).click();
    await walk.getByRole('checkbox', { name: 'Create a job: Completed' }).waitFor(long);
    await walk
      .getByRole('button', { name: /Run it/ })
      .first()
      .click();
    await walk.getByRole('button', { name: 'Run on Wick', exact: true }).click();
    await walk.getByRole('checkbox', { name: 'Run it: Completed' }).waitFor(long);
    stage = 'the job FINISHED in the Applications view';
    await page
      .getByRole('tree', { name: 'Applications' })
      .getByRole('treeitem', { name: /^job \(app-\S+\) State: FINISHED/ })
      .first()
      .waitFor(long);
    await page.screenshot({ path: join(shots, '0-vsix-walkthrough-done.png') });
    return 0;
  } catch (err) {
    await page.screenshot({ path: join(shots, 'vsix-failure.png') }).catch(() => {});
    throw new Error(`vsix: ${stage}: ${err.message}`);
  } finally {
    await closeBrowser(ctx);
  }
}
