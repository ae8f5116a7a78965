/**
 * The dashboard in a real browser (Debian's Chromium, driven by playwright-core) against a live
 * cluster of real processes with authentication on: the page asks for a login and says what to
 * run; the link `wick ui-url` prints logs the browser in (an HttpOnly, SameSite=Strict cookie that
 * the page's script cannot read); then workers appear, an application shows up and finishes live,
 * an executor's log follows as it is written, and a kill works; on the master's port and on a
 * worker's (the same cookie: a browser sends a host's cookies to each of its ports). Nothing is timed: each step waits for what the page
 * shows, and the test's timeout ends a wait that never succeeds. Screenshots (light and dark)
 * are saved under test-output/screenshots/.
 */
import assert from 'node:assert/strict';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type TestContext, test } from 'node:test';
import type { Locator } from 'playwright-core';
import {
  type Browser,
  chromiumHere,
  chromiumMissing,
  openBrowser,
  SHOTS,
} from '../helpers/chromium.js';
import { runWick } from '../helpers/cli.js';
import { startMaster, startWorker } from '../helpers/cluster.js';
import { type StdinApp, submitStdinApp } from '../helpers/webUi.js';

const SECRET = 'dashboard-test-secret';
const AUTH_CONF = { 'wick.authenticate': true };
const AUTH_ENV = { WICK_AUTH_SECRET: SECRET };

/** A browser closed when the test ends. */
async function browserFor(t: TestContext): Promise<Browser> {
  const b = await openBrowser();
  t.after(() => b.close());
  return b;
}

/** `wick submit` of the stdin-driven test application, with the cluster's secret. */
function submitApp(t: TestContext, masterUrl: string, name: string): Promise<StdinApp> {
  return submitStdinApp(t, masterUrl, name, {
    args: ['--conf', 'wick.authenticate=true'],
    env: AUTH_ENV,
  });
}

/** The table rows of `scope` that contain every one of `texts`. */
function row(scope: Locator, ...texts: string[]): Locator {
  let rows = scope.locator('tbody tr');
  for (const text of texts) rows = rows.filter({ hasText: text });
  return rows;
}

test('the dashboard shows a live cluster: workers, an app that runs and finishes, a followed log, a kill', {
  timeout: 120_000,
}, async (t) => {
  if (!chromiumHere()) return t.skip(chromiumMissing);
  const master = await startMaster(t, { conf: AUTH_CONF, env: AUTH_ENV });
  const { context, page, problems, shot } = await browserFor(t);
  // Not logged in: a page that says what to run, and no dashboard.
  const refused = await page.goto(master.webUiUrl);
  assert.equal(refused?.status(), 401);
  await page.getByRole('heading', { level: 1, name: 'Log in to Wick' }).waitFor();
  await page.getByText(`wick ui-url --master ${master.url}`, { exact: true }).waitFor();

  // The link the CLI prints logs this browser in, and moves on to the dashboard.
  const uiUrl = await runWick(['ui-url', '--master', master.url], { env: AUTH_ENV });
  assert.equal(uiUrl.code, 0, uiUrl.stderr);
  const link = uiUrl.stdout.trim();
  const started = Date.now();
  await page.goto(link);
  await page.getByRole('heading', { level: 1, name: `Wick Master at ${master.url}` }).waitFor();
  const loadMs = Date.now() - started;
  assert.equal(new URL(page.url()).pathname, '/', 'the token is gone from the address bar');
  const [session, ...others] = await context.cookies(master.webUiUrl);
  assert.deepEqual(others, []);
  assert.match(session?.name ?? '', /^wick_session_[0-9a-f]{12}$/);
  assert.deepEqual([session?.httpOnly, session?.sameSite, session?.path], [true, 'Strict', '/']);
  assert.equal(await page.evaluate(() => document.cookie), '', "the page's script cannot read it");
  await page.getByText('No workers have registered.').waitFor();

  // Workers appear as they register.
  const workers = await Promise.all([
    startWorker(t, master.url, { cores: 1, memory: '1g', conf: AUTH_CONF, env: AUTH_ENV }),
    startWorker(t, master.url, { cores: 1, memory: '1g', conf: AUTH_CONF, env: AUTH_ENV }),
  ]);
  const workersTable = page.getByRole('region', { name: /^Workers/ }).getByRole('table');
  for (const w of workers) await workersTable.getByRole('link', { name: w.workerId }).waitFor();
  await page
    .getByText('2 Used of 2 Total')
    .or(page.getByText('0 Used of 2 Total'))
    .first()
    .waitFor();
  await shot('overview-light');
  await page.emulateMedia({ colorScheme: 'dark' });
  await shot('overview-dark');
  await page.emulateMedia({ colorScheme: 'light' });

  // An application shows up live, running.
  const app = await submitApp(t, master.url, 'Dashboard follow app');
  const running = page.getByRole('region', { name: /^Running Applications/ });
  const appLink = running.getByRole('link', { name: /^app-/ });
  await appLink.waitFor();
  const appId = (await appLink.textContent())?.trim() as string;
  await row(running, appId, 'Dashboard follow app', 'RUNNING').waitFor();
  await page.getByText('1 Used of 2 Total').waitFor();

  // Its page lists its executor, with links to its logs.
  await appLink.click();
  await page
    .getByRole('heading', { level: 1, name: 'Application: Dashboard follow app' })
    .waitFor();
  const executors = page.getByRole('region', { name: /^Executors/ });
  await row(executors, 'RUNNING').waitFor();
  await shot('application-light');

  // The executor's stdout, followed: a job run now prints a line that appears without a reload.
  await executors.getByRole('link', { name: 'stdout of executor 0' }).click();
  await page.getByRole('heading', { level: 1, name: `stdout of executor 0 of ${appId}` }).waitFor();
  await page.getByText('Following', { exact: true }).waitFor();
  const log = page.locator('pre.log');
  app.say('job 7');
  await page.locator('pre.log', { hasText: 'dashboard-marker 7' }).waitFor();
  app.say('job 8');
  await page.locator('pre.log', { hasText: 'dashboard-marker 8' }).waitFor();
  assert.match((await page.getByTestId('log-range').textContent()) ?? '', /^Bytes 0-\d+ of \d+$/);
  assert.ok(await log.isVisible());
  await shot('log-follow-light');

  // It finishes live: back on the overview it moves to the completed applications.
  await page.getByRole('link', { name: 'Overview' }).click();
  app.say('stop');
  const completed = page.getByRole('region', { name: /^Completed Applications/ });
  await row(completed, appId, 'FINISHED').waitFor();

  // A kill: the dialog asks to confirm (the login is the credential, no secret is asked for).
  const victim = await submitApp(t, master.url, 'Dashboard kill app');
  const victimRow = row(running, 'Dashboard kill app', 'RUNNING');
  await victimRow.waitFor();
  await victimRow.getByRole('button', { name: /^Kill application app-/ }).click();
  const dialog = page.getByRole('dialog', { name: /^Kill application app-/ });
  await dialog.waitFor();
  assert.equal(await dialog.locator('input[type="password"]').count(), 0);
  await shot('kill-dialog-light');
  await dialog.getByRole('button', { name: 'Kill application' }).click();
  await dialog.waitFor({ state: 'hidden' });
  await row(completed, 'Dashboard kill app', 'KILLED').waitFor();
  await page.emulateMedia({ colorScheme: 'dark' });
  await shot('overview-after-kill-dark');
  await page.emulateMedia({ colorScheme: 'light' });
  victim.child.kill('SIGKILL');

  // A worker's own port serves its page, with the finished executor of the first application and
  // its logs. Which worker ran it, the master's API says (/api/worker/ID asks the worker itself).
  const asScript = { authorization: `Bearer ${SECRET}` };
  const json = (await (await fetch(`${master.webUiUrl}/json`, { headers: asScript })).json()) as {
    workers: { id: string; webuiaddress: string }[];
  };
  let ranIt: { id: string; webuiaddress: string } | undefined;
  for (const w of json.workers) {
    const s = (await (
      await fetch(`${master.webUiUrl}/api/worker/${encodeURIComponent(w.id)}`, {
        headers: asScript,
      })
    ).json()) as {
      executors: { appId?: string }[];
      finishedExecutors: { appId?: string }[];
    };
    if ([...s.executors, ...s.finishedExecutors].some((e) => e.appId === appId)) ranIt = w;
  }
  assert.ok(ranIt, `no worker ran ${appId}`);
  await page.goto(ranIt.webuiaddress);
  await page.getByRole('heading', { level: 1, name: `Worker ${ranIt.id}` }).waitFor();
  await row(page.getByRole('region', { name: /^Finished Executors/ }), appId).waitFor();
  await page.emulateMedia({ colorScheme: 'dark' });
  await shot('worker-dark');

  // The page before the login is the one error the browser may report.
  const unexpected = problems.filter((p) => !/status of 401 \(Unauthorized\)/.test(p));
  assert.deepEqual(unexpected, [], 'the page reported errors (a CSP violation?)');
  t.diagnostic(`dashboard first view in ${loadMs} ms; screenshots in ${SHOTS}`);
});

/**
 * A path-based proxy as code-server's port forwarding is (`/proxy/<port>/…` to 127.0.0.1:<port>,
 * the prefix stripped): what vscode.env.asExternalUri gives in a browser VS Code.
 */
async function pathProxy(t: TestContext): Promise<string> {
  const server = createServer((req, res) => {
    const m = /^\/proxy\/(\d+)(\/.*)$/.exec(req.url ?? '');
    if (!m) {
      res.writeHead(404).end('not a proxied path\n');
      return;
    }
    const upstream = httpRequest(
      {
        host: '127.0.0.1',
        port: Number(m[1]),
        path: m[2],
        method: req.method,
        headers: req.headers,
      },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on('error', (err) => res.writeHead(502).end(`${err.message}\n`));
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

test("behind a path-based proxy (code-server's /proxy/PORT/), the login link and the live dashboard stay under its prefix", {
  timeout: 90_000,
}, async (t) => {
  if (!chromiumHere()) return t.skip(chromiumMissing);
  const master = await startMaster(t, { conf: AUTH_CONF, env: AUTH_ENV });
  const proxy = await pathProxy(t);
  const port = new URL(master.webUiUrl).port;
  const { page, problems } = await browserFor(t);
  const uiUrl = await runWick(['ui-url', '--master', master.url], { env: AUTH_ENV });
  assert.equal(uiUrl.code, 0, uiUrl.stderr);
  const link = new URL(uiUrl.stdout.trim());
  await page.goto(`${proxy}/proxy/${port}${link.pathname}${link.search}`);
  await page.getByRole('heading', { level: 1, name: `Wick Master at ${master.url}` }).waitFor();
  assert.equal(new URL(page.url()).pathname, `/proxy/${port}/`, 'still under the prefix');
  // The page's live feed (Server-Sent Events) comes through the prefix too: a worker appears.
  const worker = await startWorker(t, master.url, {
    cores: 1,
    memory: '1g',
    conf: AUTH_CONF,
    env: AUTH_ENV,
  });
  const workersTable = page.getByRole('region', { name: /^Workers/ }).getByRole('table');
  await workersTable.getByRole('link', { name: worker.workerId }).waitFor();
  assert.deepEqual(problems, []);
});
