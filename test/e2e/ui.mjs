// The UI flow through the workbench in Chromium, as a user would: open the Wick view (the local
// cluster starts), see two ALIVE workers, Submit Job… on examples/pi.ts from the command palette,
// watch it run and complete, open the executor's stdout. Screenshots go to test-output/e2e/.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

export async function runUi(page, url, shots, root) {
  try {
    await flow(page, url, shots, root);
  } catch (err) {
    await page.screenshot({ path: join(shots, 'failure.png') }).catch(() => {});
    throw err;
  }
}

async function flow(page, url, shots, root) {
  mkdirSync(shots, { recursive: true });
  const shot = (name) => page.screenshot({ path: join(shots, `${name}.png`) });
  const long = { timeout: 60_000 };
  await page.goto(url, { waitUntil: 'domcontentloaded' });
  const wick = page.locator('.part.activitybar [aria-label^="Wick"]').first();
  await wick.waitFor(long);
  await wick.click();
  const rows = page.locator('.part.sidebar .monaco-list-row');
  await page
    .locator('.part.sidebar .monaco-list-row', { hasText: /worker-.*ALIVE/ })
    .nth(1)
    .waitFor(long);
  await page
    .locator('.statusbar-item', { hasText: /Wick ALIVE · 2 workers/ })
    .first()
    .waitFor(long);
  await shot('1-cluster-two-workers');

  // Open examples/pi.ts, then Submit Job… from the palette; the file is the active editor's.
  await page.keyboard.press('Control+P');
  await page.keyboard.type('pi.ts');
  await page
    .locator('.quick-input-list .monaco-list-row', { hasText: 'pi.ts' })
    .first()
    .waitFor(long);
  await page.keyboard.press('Enter');
  await page.locator('.tab', { hasText: 'pi.ts' }).first().waitFor(long);
  await page.keyboard.press('F1');
  await page.keyboard.type('Wick: Submit Job');
  await page
    .locator('.quick-input-list .monaco-list-row', { hasText: 'Submit Job' })
    .first()
    .waitFor(long);
  await page.keyboard.press('Enter');
  const title = page.locator('.quick-input-title');
  await title.filter({ hasText: 'arguments' }).waitFor(long);
  await page.keyboard.type('200');
  await page.keyboard.press('Enter');
  await title.filter({ hasText: 'deploy mode' }).waitFor(long);
  await page.keyboard.press('Enter');
  await title.filter({ hasText: 'executor memory' }).waitFor(long);
  await page.keyboard.press('Enter');
  await title.filter({ hasText: 'cores per executor' }).waitFor(long);
  await shot('2-submit-quick-input');
  await page.keyboard.press('Enter');
  // pi.ts finishes in about a second: wait for it under Completed, then open it there.
  const completed = rows.filter({ hasText: /Completed\s*1/ }).first();
  await completed.waitFor(long);
  await shot('3-app-completed');
  await completed.click();
  const app = rows.filter({ hasText: /FINISHED/ }).first();
  await app.waitFor(long);
  await app.click();
  const exec = rows.filter({ hasText: /executor 0/ }).first();
  await exec.waitFor(long);
  await exec.click();
  const stdout = rows.filter({ hasText: /^stdout/ }).first();
  await stdout.waitFor(long);
  await stdout.click();
  await page
    .locator('.monaco-editor .view-lines', { hasText: 'Running task' })
    .first()
    .waitFor(long);
  await shot('5-executor-stdout');
  void root;
}
