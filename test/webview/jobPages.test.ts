/**
 * The dashboard's job pages in a real browser (Debian's Chromium, headless) against real
 * processes: a master and 2 workers × 1 core, and a WickContext in this process as the driver,
 * writing its event log. A job that waits on a gate is seen running on the application page and
 * then finishing there without a reload (the page reads /api/v1 again when the master pushes new
 * progress); a join (each side's reduceByKey feeding the join's shuffle, then its result stage) with a task that fails once shows on
 * the application page (jobs, executors' tasks, timeline), its job page (the DAG's nodes and
 * edges, its stages) and its stage page (durations, slowest and failed tasks, the failed task's
 * executor log one click away), every number checked against what the job did and what /api/v1
 * says; then, once the application ended and fell out of the master's list, the same jobs from
 * its event log. Screenshots are saved under test-output/screenshots/.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Page } from 'playwright-core';
import { WickContext } from '../../backend/app/index.js';
import { loginLink } from '../../backend/shared/uiLogin.js';
import { formatBytes } from '../../webview/format.js';
import {
  executorsRegistered,
  type MasterState,
  type SharedCluster,
  startSharedCluster,
} from '../helpers/apps.js';
import {
  type Browser,
  chromiumHere,
  chromiumMissing,
  openBrowser,
  progressText,
} from '../helpers/chromium.js';
import { runSecret, uiFetch } from '../helpers/webUi.js';

for (const k of ['WICK_MASTER', 'WICK_SUBMIT_CONF', 'WICK_APP_NAME', 'WICK_APP_DIR'])
  delete process.env[k];

const dir = mkdtempSync(join(tmpdir(), 'wick-test-jobpages-'));
const logDir = join(dir, 'event-logs');
mkdirSync(logDir);

let cluster: SharedCluster;
let wc: WickContext;
let appId: string;
let browser: Browser | undefined;
let page: Page;
let problems: string[] = [];

// biome-ignore lint/suspicious/noExplicitAny: JSON as Spark writes it, read field by field.
type Json = any;

async function api(path: string): Promise<Json> {
  const res = await uiFetch(`${cluster.master.webUiUrl}/api/v1${path}`);
  assert.equal(res.status, 200, `GET ${path}: ${res.status}`);
  return res.json();
}

const appOf = (s: MasterState) =>
  s.activeApps.find((a) => a.id === appId) ?? s.completedApps.find((a) => a.id === appId);

const shot = (name: string) => browser?.shot(`job-pages-${name}`);

before(async () => {
  if (!chromiumHere()) return;
  cluster = await startSharedCluster({
    // One completed application kept: a second one's end pushes the first out of the list.
    conf: { 'wick.eventLog.dir': logDir, 'wick.deploy.retainedApplications': '1' },
  });
  wc = await WickContext.create({
    master: cluster.url,
    appName: 'job pages join',
    conf: { 'wick.eventLog.enabled': 'true', 'wick.eventLog.dir': logDir },
  });
  appId = wc.appId;
  await executorsRegistered(wc, 2);
  browser = await openBrowser();
  ({ page, problems } = browser);
  await page.goto(
    loginLink(
      cluster.master.webUiUrl,
      runSecret(),
      Date.now(),
      `#/app/${encodeURIComponent(appId)}`,
    ),
  );
  await page.getByRole('heading', { level: 1, name: 'Application: job pages join' }).waitFor();
});

after(async () => {
  await browser?.close();
  await wc?.stop();
  await cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('a running job shows on the application page, then finishes there without a reload', {
  timeout: 180_000,
  skip: chromiumMissing,
}, async () => {
  const gate = join(dir, 'gate');
  const result = wc
    .parallelize([1, 2], 2)
    .map(
      (x: number, env: { gate: string }) => {
        const fs = require('node:fs');
        const nap = new Int32Array(new SharedArrayBuffer(4));
        while (!fs.existsSync(env.gate)) Atomics.wait(nap, 0, 0, 10);
        return x * 10;
      },
      { gate },
    )
    .collect();
  const jobs = page.getByRole('region', { name: /^Jobs/ });
  const row = jobs.locator('tbody tr[data-job="0"]');
  try {
    await row.getByText('RUNNING', { exact: true }).waitFor();
    await row.locator('.progress-text').getByText('0/2 (2 running)').waitFor();
    await shot('app-running');
  } finally {
    writeFileSync(gate, '');
  }
  assert.deepEqual(await result, [10, 20]);
  // The page reads /api/v1 again when the master pushes the job's end: nothing reloads it.
  await row.getByText('SUCCEEDED', { exact: true }).waitFor();
  assert.equal(await progressText(row), '2/2');
});

test('a join with a task that fails once: its jobs, DAG, stages, tasks, executors and timeline', {
  timeout: 240_000,
  skip: chromiumMissing,
}, async () => {
  const flaky = join(dir, 'flaky');
  const left = wc
    .parallelize(
      ['a', 'b', 'c', 'd', 'e', 'f'].map((k, i): [string, number] => [k, i]),
      3,
    )
    .map(
      (kv: [string, number], env: { flaky: string }) => {
        const fs = require('node:fs');
        if (kv[0] === 'c' && !fs.existsSync(env.flaky)) {
          fs.writeFileSync(env.flaky, '');
          throw new Error('flaky c, first attempt');
        }
        return kv;
      },
      { flaky },
    )
    .reduceByKey((a: number, b: number) => a + b, 2);
  const right = wc
    .parallelize(
      ['a', 'c', 'e', 'g'].map((k): [string, string] => [k, k.toUpperCase()]),
      2,
    )
    .reduceByKey((a: string, b: string) => a + b, 2);
  const joined = await left.join(right, 2).collect();
  assert.deepEqual(joined.map(([k]) => k).sort(), ['a', 'c', 'e'], 'the keys on both sides');
  await cluster.watch.waitFor((s) => appOf(s)?.progress?.jobs.succeeded === 2);

  // What /api/v1 says, which the pages must show.
  const job: Json = (await api(`/applications/${appId}/jobs`)).find((j: Json) => j.jobId === 1);
  // Each side's reduceByKey, the join's shuffle of their union, and its result stage.
  assert.equal(job.stageIds.length, 4);
  assert.equal(job.numTasks, 3 + 2 + 4 + 2);
  assert.equal(job.numCompletedTasks, 11);
  assert.equal(job.numFailedTasks, 1, 'the first attempt of the flaky task');
  const [leftId, rightId, joinId, resultId] = [...job.stageIds].sort(
    (a: number, b: number) => a - b,
  );
  const stages: Json[] = await api(`/applications/${appId}/stages`);
  const stage = (id: number) => stages.find((s) => s.stageId === id);
  assert.deepEqual([...stage(joinId).parentIds].sort(), [leftId, rightId]);
  assert.deepEqual(stage(resultId).parentIds, [joinId]);
  assert.deepEqual(stage(leftId).parentIds, []);
  const result = stage(resultId);
  const leftStage = stage(leftId);
  assert.equal(leftStage.numTasks, 3);
  assert.equal(leftStage.numFailedTasks, 1);
  const executors: Json[] = await api(`/applications/${appId}/allexecutors`);

  // The application page: both jobs, the executors' tasks, the timeline.
  const jobs = page.getByRole('region', { name: /^Jobs/ });
  const row = jobs.locator('tbody tr[data-job="1"]');
  await row.getByText('SUCCEEDED', { exact: true }).waitFor();
  assert.equal(await progressText(row), '11/11 (1 failed)');
  assert.equal(await row.locator('td').nth(4).textContent(), '4/4');
  assert.equal(await jobs.locator('tbody tr').count(), 2);
  const execTable = page.getByRole('region', { name: /^Tasks by Executor/ });
  for (const e of executors) {
    const r = execTable.locator(`tbody tr[data-executor="${e.id}"]`);
    const cells = await r.locator('td').allTextContents();
    assert.equal(cells[6], String(e.completedTasks), `executor ${e.id}'s completed tasks`);
    assert.equal(cells[5], String(e.failedTasks), `executor ${e.id}'s failed tasks`);
    assert.equal(cells[9], formatBytes(e.totalShuffleRead));
    assert.equal(cells[10], formatBytes(e.totalShuffleWrite));
  }
  assert.equal(
    executors.reduce((n, e) => n + e.completedTasks, 0),
    2 + 11,
    'every finished task of both jobs, on some executor',
  );
  assert.equal(
    executors.reduce((n, e) => n + e.failedTasks, 0),
    1,
  );
  const timeline = page.getByRole('region', { name: 'Event Timeline' });
  assert.equal(await timeline.locator('.tl-added').count(), 2, 'two executors added');
  assert.equal(await timeline.locator('rect.tl-bar:not(.tl-stage)').count(), 2, 'two jobs');
  assert.equal(await timeline.locator('rect.tl-stage').count(), 1 + 4, 'five stage attempts');
  await shot('app');

  // The job page: its DAG (two map stages feeding the result) and its stages.
  await row.getByRole('link', { name: '1' }).click();
  await page.getByRole('heading', { level: 1, name: 'Job 1 of job pages join' }).waitFor();
  const dag = page.getByRole('region', { name: 'DAG of Stages' });
  await dag.locator(`[data-stage-node="${resultId}"]`).waitFor();
  assert.equal(await dag.locator('[data-stage-node]').count(), 4);
  const edges = await dag
    .locator('[data-edge]')
    .evaluateAll((els) => els.map((e) => e.getAttribute('data-edge')).sort());
  assert.deepEqual(
    edges,
    [`${leftId}-${joinId}`, `${rightId}-${joinId}`, `${joinId}-${resultId}`].sort(),
  );
  const stagesTable = page.getByRole('region', { name: /^Stages/ });
  assert.equal(await stagesTable.locator('tbody tr').count(), 4);
  const leftRow = stagesTable.locator(`tbody tr[data-stage="${leftId}.0"]`);
  assert.equal(await progressText(leftRow), '3/3 (1 failed)');
  assert.equal(
    await stagesTable.locator(`tbody tr[data-stage="${resultId}.0"] td`).nth(7).textContent(),
    formatBytes(result.shuffleReadBytes),
  );
  await shot('job');

  // The stage page of the flaky stage: durations, slowest tasks, the failed task and its log.
  await dag.locator(`[data-stage-node="${leftId}"]`).click();
  await page
    .getByRole('heading', { level: 1, name: `Stage ${leftId} (attempt 0) of job pages join` })
    .waitFor();
  const tasks: Json[] = await api(
    `/applications/${appId}/stages/${leftId}/0/taskList?sortBy=-runtime`,
  );
  assert.equal(tasks.length, 4, 'three successes and the failed attempt');
  const summary = page.locator('tr[data-summary="duration"] td');
  await summary.first().waitFor();
  assert.equal(await summary.count(), 5);
  await page.locator('.chart canvas').first().waitFor();
  const slowest = page.getByRole('region', { name: 'Slowest Tasks' });
  await slowest.locator('tbody tr').nth(3).waitFor();
  assert.deepEqual(
    await slowest
      .locator('tbody tr')
      .evaluateAll((rs) => rs.map((r) => Number(r.getAttribute('data-task')))),
    tasks.map((t) => t.taskId),
    'the slowest first, as /api/v1 sorts them',
  );
  const failed = page.getByRole('region', { name: /^Failed Tasks/ });
  const bad = tasks.find((t) => t.status === 'FAILED');
  const failedRow = failed.locator(`tbody tr[data-task="${bad.taskId}"]`);
  await failedRow
    .getByText(/flaky c, first attempt/)
    .first()
    .waitFor();
  assert.equal(await failed.locator('tbody tr').count(), 1);
  assert.equal(await failedRow.locator('td').nth(4).textContent(), bad.executorId);
  await shot('stage');
  await failedRow.getByRole('link', { name: `stderr of executor ${bad.executorId}` }).click();
  await page
    .locator('.log')
    .getByText(/flaky c, first attempt/)
    .first()
    .waitFor();
  assert.deepEqual(problems, [], 'no script error and nothing against the CSP');
});

test('after the application ended and left the master’s list: its jobs from its event log', {
  timeout: 180_000,
  skip: chromiumMissing,
}, async () => {
  await wc.stop();
  // A second application's end pushes the first out (wick.deploy.retainedApplications = 1).
  const other = await WickContext.create({ master: cluster.url, appName: 'job pages other' });
  await other.stop();
  await cluster.watch.waitFor(
    (s) => s.completedApps.some((a) => a.id === other.appId) && !appOf(s),
  );
  await page.goto(`${cluster.master.webUiUrl}/#/app/${encodeURIComponent(appId)}`);
  await page.getByText('The master no longer lists this application').waitFor();
  const jobs = page.getByRole('region', { name: /^Jobs/ });
  const row = jobs.locator('tbody tr[data-job="1"]');
  await row.getByText('SUCCEEDED', { exact: true }).waitFor();
  assert.equal(await progressText(row), '11/11 (1 failed)');
  assert.equal(await jobs.locator('tbody tr').count(), 2);
  await row.getByRole('link', { name: '1' }).click();
  const dag = page.getByRole('region', { name: 'DAG of Stages' });
  await dag.locator('[data-edge]').nth(2).waitFor({ state: 'attached' });
  assert.equal(await dag.locator('[data-stage-node]').count(), 4);
  assert.equal(await dag.locator('[data-edge]').count(), 3);
  await shot('logged-job');
  assert.deepEqual(problems, []);
});
