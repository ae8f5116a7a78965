/**
 * `wick history-server`'s dashboard in a real browser (Debian's Chromium, headless) over event
 * logs written by a real run: a master and 2 workers × 1 core, a WickContext in this process as
 * the driver, logging its events, runs a count and a join (each side's reduceByKey feeding the
 * join's shuffle, then its result stage); then the cluster is stopped, and a history server
 * process is started over the folder, with a copy of the log cut inside a line and a file that is
 * no event log beside it. Its listing (Spark's HistoryPage: completed by default, "Show incomplete
 * applications"), the application page, a job page and a stage page are checked against what the
 * history server's own /api/v1 says and what the job did; the cut copy is listed as incomplete and
 * opens up to the break, the bad file is named with why; no page asks for anything live. Screenshots
 * are saved under test-output/screenshots/.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Page } from 'playwright-core';
import { WickContext } from '../../backend/app/index.js';
import { loginLink } from '../../backend/shared/uiLogin.js';
import { formatBytes } from '../../webview/format.js';
import { executorsRegistered, type SharedCluster, startSharedCluster } from '../helpers/apps.js';
import {
  type Browser,
  chromiumHere,
  chromiumMissing,
  openBrowser,
  progressText,
  SHOTS,
} from '../helpers/chromium.js';
import { startWick, type WickProcess } from '../helpers/cli.js';
import { runSecret, uiFetch } from '../helpers/webUi.js';

for (const k of ['WICK_MASTER', 'WICK_SUBMIT_CONF', 'WICK_APP_NAME', 'WICK_APP_DIR'])
  delete process.env[k];

const dir = mkdtempSync(join(tmpdir(), 'wick-test-historypages-'));
const logDir = join(dir, 'event-logs');
mkdirSync(logDir);
const CUT_ID = 'app-20200101000000-0007';
const BAD_LOG = 'app-20200101000000-0008';
const FAILED_ID = 'app-20200101000000-0009';
const APP_NAME = 'history pages join';

let cluster: SharedCluster | undefined;
let server: WickProcess | undefined;
let url = '';
let appId = '';
let browser: Browser | undefined;
let page: Page;
let problems: string[] = [];
/** Every path the page asked of the history server. */
const asked: string[] = [];

// biome-ignore lint/suspicious/noExplicitAny: JSON as Spark writes it, read field by field.
type Json = any;

async function api(path: string): Promise<Json> {
  const res = await uiFetch(`${url}/api/v1${path}`);
  assert.equal(res.status, 200, `GET ${path}: ${res.status}`);
  return res.json();
}

const shot = (name: string) => browser?.shot(`history-${name}`);

before(async () => {
  if (!chromiumHere()) return;
  cluster = await startSharedCluster({ conf: { 'wick.eventLog.dir': logDir } });
  const wc = await WickContext.create({
    master: cluster.url,
    appName: APP_NAME,
    conf: { 'wick.eventLog.enabled': 'true', 'wick.eventLog.dir': logDir },
  });
  appId = wc.appId;
  try {
    await executorsRegistered(wc, 2);
    assert.equal(await wc.parallelize([1, 2, 3, 4], 2).count(), 4);
    const left = wc
      .parallelize(
        ['a', 'b', 'c', 'd', 'e', 'f'].map((k, i): [string, number] => [k, i]),
        3,
      )
      .reduceByKey((a: number, b: number) => a + b, 2);
    const right = wc
      .parallelize(
        ['a', 'c', 'e', 'g'].map((k): [string, string] => [k, k.toUpperCase()]),
        2,
      )
      .reduceByKey((a: string, b: string) => a + b, 2);
    const joined = await left.join(right, 2).collect();
    assert.deepEqual(joined.map(([k]) => k).sort(), ['a', 'c', 'e']);
  } finally {
    await wc.stop();
  }
  // The history server needs no master: the cluster is gone before it starts.
  await cluster.stop();
  cluster = undefined;
  const logPath = join(logDir, appId);
  assert.ok(existsSync(logPath), `the finished log is named by its id: ${logPath}`);

  // A copy cut inside the line after job 1's start (job 0 ended, job 1 runs), and junk.
  const whole = readFileSync(logPath, 'utf8').replaceAll(appId, CUT_ID);
  const lines = whole.split('\n');
  const k = lines.findIndex((l) => l.includes('"WickListenerJobStart"') && l.includes('"jobId":1'));
  assert.ok(k > 0, 'job 1 started in the log');
  const upTo = lines.slice(0, k + 1).join('\n').length + 1;
  writeFileSync(
    join(logDir, CUT_ID),
    whole.slice(0, upTo + Math.floor((lines[k + 1] as string).length / 2)),
  );
  writeFileSync(join(logDir, BAD_LOG), '\u0000\u0001 not a log at all\n');
  // A copy whose driver logged a failure at its end.
  const failed = readFileSync(logPath, 'utf8')
    .replaceAll(appId, FAILED_ID)
    .split('\n')
    .map((l) => {
      if (!l.includes('"WickListenerApplicationEnd"')) return l;
      return JSON.stringify({
        ...JSON.parse(l),
        failure: 'Error: the user’s boom\n    at main (app.ts:3:9)',
      });
    })
    .join('\n');
  writeFileSync(join(logDir, FAILED_ID), failed);

  server = startWick([
    'history-server',
    '--host',
    '127.0.0.1',
    '--port',
    '0',
    '--dir',
    logDir,
    '--print-ready',
    '--exit-with-parent',
  ]);
  url = (JSON.parse(await server.firstLine()) as { url: string }).url;

  browser = await openBrowser();
  ({ page, problems } = browser);
  page.on('request', (r) => asked.push(new URL(r.url()).pathname));
  await page.goto(loginLink(url, runSecret()));
  await page.getByRole('heading', { level: 1, name: 'History Server' }).waitFor();
});

after(async () => {
  await browser?.close();
  if (server && server.child.exitCode === null) {
    server.child.kill('SIGTERM');
    await server.exited;
  }
  await cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('the page is behind the login, under the dashboard’s CSP', {
  timeout: 60_000,
  skip: chromiumMissing,
}, async () => {
  const anonymous = await fetch(`${url}/`, { redirect: 'manual' });
  assert.notEqual(anonymous.status, 200, 'no page without the login');
  assert.doesNotMatch(await anonymous.text(), /webview\.js/);
  for (const path of ['/api/history', `/api/history/applications/${appId}`, '/static/webview.js'])
    assert.equal((await fetch(`${url}${path}`)).status, 401, `${path} without the login`);
  const res = await uiFetch(`${url}/`);
  assert.equal(res.status, 200);
  const csp = res.headers.get('content-security-policy') ?? '';
  assert.match(csp, /script-src 'nonce-[^']+'/);
  assert.match(await res.text(), /"mode":"history"/);
  const js = await uiFetch(`${url}/static/webview.js`);
  assert.equal(js.status, 200);
});

test('the listing: completed applications, "Show incomplete applications", and the log that cannot be read', {
  timeout: 120_000,
  skip: chromiumMissing,
}, async () => {
  const listed: Json[] = await api('/applications');
  const mine = listed.find((a) => a.id === appId);
  assert.ok(mine, `the history server lists ${appId}`);
  const completed = page.getByRole('region', { name: /^Completed Applications/ });
  const row = completed.locator(`tbody tr[data-app="${appId}"]`);
  await row.waitFor();
  const cells = await row.locator('td').allTextContents();
  assert.equal(cells[0], appId);
  assert.equal(cells[1], APP_NAME);
  assert.ok(cells[2] && cells[3], 'started and completed');
  assert.match(cells[4] ?? '', /\d/, 'a duration');
  assert.equal(cells[5], mine.attempts[0].sparkUser);
  assert.equal(
    await completed.locator(`tbody tr[data-app="${CUT_ID}"]`).count(),
    0,
    'the cut log is not among the completed',
  );
  await completed
    .locator(`tbody tr[data-app="${FAILED_ID}"]`)
    .getByText('FAILED', { exact: true })
    .waitFor();
  assert.equal(await row.getByText('FAILED').count(), 0);
  assert.equal(await page.getByRole('navigation').getByRole('link').count(), 1, 'one nav item');
  await page.getByText(logDir, { exact: true }).waitFor();
  const bad = page.getByRole('region', { name: /^Event Logs That Cannot Be Read/ });
  await bad
    .locator(`tbody tr[data-log="${BAD_LOG}"]`)
    .getByText(/line 1 is not a JSON event/)
    .waitFor();
  assert.equal(await bad.locator('tbody tr').count(), 1, 'only the junk');
  await shot('listing');

  const info = await (await uiFetch(`${url}/api/history`)).json();
  assert.deepEqual(info.cut, [CUT_ID], 'the cut copy is named as such');
  assert.equal(info.unreadableCount, 1);
  await page.getByRole('link', { name: 'Show incomplete applications' }).click();
  const incomplete = page.getByRole('region', { name: /^Incomplete Applications/ });
  const cut = incomplete.locator(`tbody tr[data-app="${CUT_ID}"]`);
  await cut.waitFor();
  await cut.getByText('(log cut short)').waitFor();
  assert.equal(await incomplete.locator(`tbody tr[data-app="${appId}"]`).count(), 0);
  assert.equal((await cut.locator('td').nth(3).textContent()) ?? '', '', 'no completion');
  assert.match(page.url(), /#\/\?showIncomplete=true$/);
  await shot('listing-incomplete');
  // The docs' picture (docs/history.md): the page's top, without the empty rest.
  await page.screenshot({
    path: join(SHOTS, 'history-listing-docs.png'),
    clip: { x: 0, y: 0, width: 1000, height: 430 },
  });
  await page.getByRole('link', { name: 'Back to completed applications' }).click();
  await completed.locator(`tbody tr[data-app="${appId}"]`).waitFor();
});

test('an application page, its job page and a stage page: the master’s pages over its event log', {
  timeout: 180_000,
  skip: chromiumMissing,
}, async () => {
  const job: Json = (await api(`/applications/${appId}/jobs`)).find((j: Json) => j.jobId === 1);
  assert.equal(job.stageIds.length, 4, "each side's reduceByKey, the join's shuffle, the result");
  const stages: Json[] = await api(`/applications/${appId}/stages`);
  const executors: Json[] = await api(`/applications/${appId}/allexecutors`);
  const [leftId, , , resultId] = [...job.stageIds].sort((a: number, b: number) => a - b);

  await page.goto(`${url}/#/`);
  await page
    .getByRole('region', { name: /^Completed Applications/ })
    .getByRole('link', { name: appId })
    .click();
  await page.getByRole('heading', { level: 1, name: `Application: ${APP_NAME}` }).waitFor();
  const facts = page.getByRole('definition');
  await facts.getByText('COMPLETED', { exact: true }).waitFor();
  const jobs = page.getByRole('region', { name: /^Jobs/ });
  const row = jobs.locator('tbody tr[data-job="1"]');
  await row.getByText('SUCCEEDED', { exact: true }).waitFor();
  assert.equal(await progressText(row), `${job.numTasks}/${job.numTasks}`);
  assert.equal(await row.locator('td').nth(4).textContent(), '4/4');
  assert.equal(await jobs.locator('tbody tr').count(), 2);
  const execTable = page.getByRole('region', { name: /^Tasks by Executor/ });
  await execTable.locator('tbody tr').first().waitFor();
  for (const e of executors) {
    const cells = await execTable.locator(`tbody tr[data-executor="${e.id}"] td`).allTextContents();
    assert.equal(cells[6], String(e.completedTasks), `executor ${e.id}'s completed tasks`);
    assert.equal(cells[10], formatBytes(e.totalShuffleWrite));
    assert.equal(cells[11], '', 'no log links: the logs stay with the workers');
  }
  assert.equal(
    executors.reduce((n, e) => n + e.completedTasks, 0),
    2 + job.numTasks,
  );
  const timeline = page.getByRole('region', { name: 'Event Timeline' });
  await timeline.locator('rect.tl-stage').first().waitFor();
  assert.equal(await timeline.locator('rect.tl-bar:not(.tl-stage)').count(), 2, 'two jobs');
  assert.equal(await timeline.locator('rect.tl-stage').count(), stages.length);
  assert.equal(await page.getByRole('button', { name: /Kill/ }).count(), 0, 'nothing to kill');
  await shot('app');

  await row.getByRole('link', { name: '1' }).click();
  await page.getByRole('heading', { level: 1, name: `Job 1 of ${APP_NAME}` }).waitFor();
  const dag = page.getByRole('region', { name: 'DAG of Stages' });
  await dag.locator(`[data-stage-node="${resultId}"]`).waitFor();
  assert.equal(await dag.locator('[data-stage-node]').count(), 4);
  assert.equal(await dag.locator('[data-edge]').count(), 3);
  const stagesTable = page.getByRole('region', { name: /^Stages/ });
  assert.equal(await stagesTable.locator('tbody tr').count(), 4);
  await shot('job');

  await dag.locator(`[data-stage-node="${leftId}"]`).click();
  await page
    .getByRole('heading', { level: 1, name: `Stage ${leftId} (attempt 0) of ${APP_NAME}` })
    .waitFor();
  const tasks: Json[] = await api(
    `/applications/${appId}/stages/${leftId}/0/taskList?sortBy=-runtime`,
  );
  assert.equal(tasks.length, 3);
  await page.locator('tr[data-summary="duration"] td').first().waitFor();
  await page.locator('.chart canvas').first().waitFor();
  const slowest = page.getByRole('region', { name: 'Slowest Tasks' });
  await slowest.locator('tbody tr').nth(2).waitFor();
  assert.deepEqual(
    await slowest
      .locator('tbody tr')
      .evaluateAll((rs) => rs.map((r) => Number(r.getAttribute('data-task')))),
    tasks.map((t) => t.taskId),
  );
  assert.equal(await slowest.getByRole('link', { name: /stderr/ }).count(), 0);
  await shot('stage');
  assert.deepEqual(problems, [], 'no script error and nothing against the CSP');
});

test('the cut log opens up to its break; the master’s own routes have nothing here; nothing live is asked', {
  timeout: 120_000,
  skip: chromiumMissing,
}, async () => {
  await page.goto(`${url}/#/?showIncomplete=true`);
  await page.getByRole('link', { name: CUT_ID }).click();
  await page.getByText('Its log has no end').waitFor();
  await page.getByRole('definition').getByText('INCOMPLETE', { exact: true }).waitFor();
  const jobs = page.getByRole('region', { name: /^Jobs/ });
  await jobs.locator('tbody tr[data-job="0"]').getByText('SUCCEEDED', { exact: true }).waitFor();
  await jobs.locator('tbody tr[data-job="1"]').getByText('RUNNING', { exact: true }).waitFor();
  await page
    .getByRole('definition')
    .getByText(/cut short: read up to the break/)
    .waitFor();
  await shot('cut-app');

  await page.goto(`${url}/#/app/${FAILED_ID}`);
  await page.getByRole('definition').getByText('FAILED', { exact: true }).waitFor();
  await page
    .locator('pre.failure')
    .getByText(/the user’s boom\n\s+at main \(app\.ts:3:9\)/)
    .waitFor();

  for (const hash of ['#/workers', '#/drivers', '#/worker/worker-1']) {
    await page.goto(`${url}/${hash}`);
    await page.getByText('A history server shows logged applications only').waitFor();
  }
  await page.goto(`${url}/#/log?appId=${appId}&executorId=0&logType=stderr`);
  await page.getByText(/reads event logs only/).waitFor();
  await page.goto(`${url}/#/app/app-20000101000000-0000`);
  await page.getByText(/No event log of application app-20000101000000-0000/).waitFor();

  assert.ok(
    asked.some((p) => p.startsWith('/api/v1/applications/')),
    'the pages read /api/v1',
  );
  assert.deepEqual(
    asked.filter((p) => /^\/api\/(events|log|kill|worker)/.test(p)),
    [],
    'nothing live, no log, no kill, no worker',
  );
  assert.deepEqual(problems, []);
});
