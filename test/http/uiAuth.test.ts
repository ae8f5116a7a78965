/**
 * The web UI behind the cluster's door, against real master, worker and application processes:
 * with authentication on (WICK_AUTH_SECRET alone), every route of the master's and the worker's
 * UI (listed by the UI classes themselves, so a new route is covered without editing this file)
 * answers 401 without a login, but /health; with a login cookie or the secret as a Bearer token
 * it answers as it should. Login links work once, and not when expired, from the future, or made
 * with another secret. With authentication off, no route asks for a login.
 */
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import {
  mintLoginToken,
  mintSession,
  SESSION_TTL_MS,
  sessionCookieName,
} from '../../backend/shared/uiLogin.js';
import { startMaster, startWorker } from '../helpers/cluster.js';
import { checkNothingLeftRunning } from '../helpers/leaks.js';
import { logIn, openLoginLink, type Route, submitStdinApp, uiRoutes } from '../helpers/webUi.js';

checkNothingLeftRunning();

const SECRET = 'web-ui-auth-test-secret-0001';
const ENV = { WICK_AUTH_SECRET: SECRET };

interface Sample {
  /** Path and query. */
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** The status once logged in. */
  status: number;
}

/** What each route is asked, by `METHOD path` as Hono lists it. */
type Samples = Record<string, Sample>;

function masterSamples(workerId: string, appId: string): Samples {
  const log = `appId=${appId}&executorId=0`;
  const p = `/proxy/${workerId}`;
  return {
    'ALL /*': { url: '/no-such-page', status: 404 },
    'GET /health': { url: '/health', status: 200 },
    // Without a token: refused whatever else the request carries (the link is the credential).
    'GET /login': { url: '/login', status: 401 },
    'GET /json': { url: '/json', status: 200 },
    'GET /json/': { url: '/json/', status: 200 },
    'GET /json/clusterutilization': { url: '/json/clusterutilization', status: 200 },
    'GET /api/events': { url: '/api/events', status: 200 },
    'GET /api/worker/:id': { url: `/api/worker/${workerId}`, status: 200 },
    'GET /api/log': { url: `/api/log?${log}`, status: 200 },
    'GET /api/log/follow': { url: `/api/log/follow?${log}&offset=0`, status: 200 },
    'ALL /proxy/:workerId/*': { url: `${p}/no-such-page`, status: 404 },
    'GET /proxy/:workerId': { url: p, status: 302 },
    'GET /proxy/:workerId/': { url: `${p}/`, status: 302 },
    'GET /proxy/:workerId/json': { url: `${p}/json`, status: 200 },
    'GET /proxy/:workerId/log': { url: `${p}/log?${log}`, status: 200 },
    'GET /proxy/:workerId/api/log': { url: `${p}/api/log?${log}`, status: 200 },
    'GET /proxy/:workerId/api/log/follow': {
      url: `${p}/api/log/follow?${log}&offset=0`,
      status: 200,
    },
    'POST /api/kill': {
      url: '/api/kill',
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-wick-request': '1' },
      body: JSON.stringify({ kind: 'app', id: 'app-20261202000000-9999' }),
      status: 200,
    },
    'ALL /api/kill': { url: '/api/kill', method: 'PUT', body: '{}', status: 405 },
    // Spark's URLs (sparkUiUrls.ts): a redirect into the dashboard, and kills of nothing known.
    'GET /app': { url: '/app?appId=app-20261202000000-9999', status: 302 },
    'GET /app/': { url: '/app/?appId=app-20261202000000-9999', status: 302 },
    'GET /driver': { url: '/driver?id=driver-20261202000000-9999', status: 302 },
    'GET /driver/': { url: '/driver/?id=driver-20261202000000-9999', status: 302 },
    ...sparkKillSamples(),
    ...workerDecommissionSamples(),
    'GET /metrics/prometheus': { url: '/metrics/prometheus', status: 200 },
    // An application the master has no report of: its JSON 404 once logged in.
    ...apiV1Samples('app-20261202000000-9999'),
    'GET /': { url: '/', status: 200 },
    'GET /index.html': { url: '/index.html', status: 200 },
    'GET /static/webview.js': { url: '/static/webview.js', status: 200 },
    'GET /static/webview.css': { url: '/static/webview.css', status: 200 },
  };
}

/** POST /app/kill/ and /driver/kill/ (with and without the slash) of nothing the master knows. */
function sparkKillSamples(): Samples {
  const out: Samples = {};
  for (const kind of ['app', 'driver']) {
    for (const slash of ['', '/']) {
      const url = `/${kind}/kill${slash}?id=${kind}-20261202000000-9999&terminate=true`;
      out[`POST /${kind}/kill${slash}`] = {
        url,
        method: 'POST',
        headers: { 'x-wick-request': '1' },
        status: 400,
      };
      out[`ALL /${kind}/kill${slash}`] = { url, method: 'PUT', status: 405 };
    }
  }
  return out;
}

/** POST /workers/kill/ (with and without the slash) of a host with no worker: Spark's 404. */
function workerDecommissionSamples(): Samples {
  const out: Samples = {};
  for (const slash of ['', '/']) {
    const url = `/workers/kill${slash}?host=10.255.255.254`;
    out[`POST /workers/kill${slash}`] = {
      url,
      method: 'POST',
      headers: { 'x-wick-request': '1' },
      status: 404,
    };
    out[`ALL /workers/kill${slash}`] = { url, method: 'PUT', status: 405 };
  }
  return out;
}

function apiV1Samples(appId: string): Samples {
  const a = `/api/v1/applications/${appId}`;
  const samples: Samples = {
    'GET /api/v1/applications': { url: '/api/v1/applications', status: 200 },
  };
  for (const [path, url] of [
    ['', ''],
    ['/jobs', '/jobs'],
    ['/jobs/:jobId', '/jobs/0'],
    ['/stages', '/stages'],
    ['/stages/:stageId', '/stages/0'],
    ['/stages/:stageId/:attempt', '/stages/0/0'],
    ['/stages/:stageId/:attempt/taskList', '/stages/0/0/taskList'],
    ['/stages/:stageId/:attempt/taskSummary', '/stages/0/0/taskSummary'],
    ['/executors', '/executors'],
    ['/allexecutors', '/allexecutors'],
    ['/environment', '/environment'],
  ]) {
    samples[`GET /api/v1/applications/:app${path}`] = { url: `${a}${url}`, status: 404 };
  }
  return samples;
}

function workerSamples(appId: string): Samples {
  const log = `appId=${appId}&executorId=0`;
  return {
    'ALL /*': { url: '/no-such-page', status: 404 },
    'GET /health': { url: '/health', status: 200 },
    'GET /login': { url: '/login', status: 401 },
    'GET /json': { url: '/json', status: 200 },
    'GET /json/': { url: '/json/', status: 200 },
    'GET /api/worker': { url: '/api/worker', status: 200 },
    'GET /log': { url: `/log?${log}`, status: 200 },
    'GET /api/events': { url: '/api/events', status: 200 },
    'GET /api/log': { url: `/api/log?${log}`, status: 200 },
    'GET /api/log/follow': { url: `/api/log/follow?${log}&offset=0`, status: 200 },
    'GET /metrics/prometheus': { url: '/metrics/prometheus', status: 200 },
    'GET /': { url: '/', status: 200 },
    'GET /index.html': { url: '/index.html', status: 200 },
    'GET /static/webview.js': { url: '/static/webview.js', status: 200 },
    'GET /static/webview.css': { url: '/static/webview.css', status: 200 },
  };
}

/** The sample of every route, failing on a route this test does not know (give it a sample). */
function plan(routes: Route[], samples: Samples, ui: string): [string, Sample][] {
  const unknown = routes.map((r) => `${r.method} ${r.path}`).filter((k) => !(k in samples));
  assert.deepEqual(unknown, [], `${ui} routes without a sample in this test`);
  return routes.map((r) => {
    const key = `${r.method} ${r.path}`;
    return [key, samples[key] as Sample];
  });
}

/** Status, content type and body (an event stream: its status, then hung up). */
async function ask(
  base: string,
  s: Sample,
  headers: Record<string, string> = {},
): Promise<{ status: number; type: string; text: string }> {
  const controller = new AbortController();
  const res = await fetch(`${base}${s.url}`, {
    method: s.method ?? 'GET',
    headers: { ...s.headers, ...headers },
    redirect: 'manual',
    signal: controller.signal,
    ...(s.body !== undefined ? { body: s.body } : {}),
  });
  const type = res.headers.get('content-type') ?? '';
  if (type.startsWith('text/event-stream')) {
    controller.abort();
    return { status: res.status, type, text: '' };
  }
  return { status: res.status, type, text: await res.text() };
}

/** A master, a worker and an application whose executor 0 has run a job (so it has a log). */
async function clusterWithApp(t: TestContext) {
  const master = await startMaster(t, { env: ENV });
  const worker = await startWorker(t, master.url, { cores: 1, env: ENV });
  await master.waitForStderr(/Registering worker/);
  const app = await submitStdinApp(t, master.url, 'Web UI auth test app', { env: ENV });
  app.say('job 1');
  await app.printed(/^done 1$/);
  const json = (await (
    await fetch(`${master.webUiUrl}/json`, { headers: { authorization: `Bearer ${SECRET}` } })
  ).json()) as { activeapps: { id: string }[] };
  const appId = json.activeapps[0]?.id as string;
  assert.match(appId, /^app-/);
  return { master, worker, appId };
}

test('with authentication on, every route of both web UIs needs a login, but /health', {
  timeout: 180_000,
}, async (t) => {
  const routes = await uiRoutes();
  const { master, worker, appId } = await clusterWithApp(t);
  const cookie = await logIn(master.webUiUrl, SECRET);
  const uis: [string, string, [string, Sample][]][] = [
    [
      'master',
      master.webUiUrl,
      plan(routes.master, masterSamples(worker.workerId, appId), 'master'),
    ],
    ['worker', worker.webUiUrl, plan(routes.worker, workerSamples(appId), 'worker')],
  ];
  const otherCluster = `${sessionCookieName('another-cluster-secret-000')}=${mintSession('another-cluster-secret-000')}`;
  const at = cookie.length - 10;
  const forged = `${cookie.slice(0, at)}${cookie[at] === 'A' ? 'B' : 'A'}${cookie.slice(at + 1)}`;
  let requests = 0;
  for (const [ui, base, samples] of uis) {
    for (const [route, s] of samples) {
      const what = `${ui} ${route} (${s.method ?? 'GET'} ${s.url})`;
      const refusedWith: Record<string, Record<string, string>> = {
        'no credentials': {},
        'a wrong Bearer secret': { authorization: 'Bearer not-the-cluster-secret' },
        'the old kill header': { 'x-wick-secret': SECRET },
        "another cluster's session": { cookie: otherCluster },
        'a forged session': { cookie: forged },
      };
      for (const [how, headers] of Object.entries(refusedWith)) {
        const r = await ask(base, s, headers);
        requests++;
        if (route === 'GET /health') {
          assert.deepEqual([r.status, r.text], [200, 'ok\n'], `${what} with ${how}`);
          continue;
        }
        assert.equal(r.status, 401, `${what} with ${how}: ${r.text}`);
        assert.match(r.type, /^application\/json/, what);
        const body = JSON.parse(r.text) as { error: string; message: string };
        assert.equal(body.error, 'unauthorized');
        const command =
          ui === 'master'
            ? `wick ui-url --master ${master.url}`
            : `wick ui-url --master ${master.url} --worker ${worker.workerId}`;
        assert.ok(body.message.includes(command), `${what}: ${body.message}`);
      }
      // Logged in: the master's cookie (a browser sends a host's cookies to each of its ports),
      // or the secret as a Bearer token.
      const loggedIn: Record<string, string>[] = [
        { cookie },
        { authorization: `Bearer ${SECRET}` },
      ];
      for (const headers of loggedIn) {
        const r = await ask(base, s, headers);
        requests++;
        assert.equal(r.status, s.status, `${what} logged in (${Object.keys(headers)}): ${r.text}`);
      }
    }
  }
  // A browser that navigates to a page without a login is told, on a page, what to run.
  const page = await fetch(`${master.webUiUrl}/`, { headers: { accept: 'text/html' } });
  const html = await page.text();
  assert.equal(page.status, 401);
  assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
  assert.match(page.headers.get('www-authenticate') ?? '', /^Bearer realm="wick"$/);
  assert.ok(html.includes(`<pre>wick ui-url --master ${master.url}</pre>`), html);
  t.diagnostic(
    `routes covered: ${routes.master.length} of the master's UI, ${routes.worker.length} of the worker's; ${requests} requests`,
  );
});

test('a login link works once, and only while it is current and made with this cluster’s secret', {
  timeout: 60_000,
}, async (t) => {
  const master = await startMaster(t, { env: ENV });
  const ui = master.webUiUrl;
  const link = (token: string) => `${ui}/login?token=${encodeURIComponent(token)}`;
  const refused = async (url: string, why: RegExp) => {
    const res = await fetch(url, { redirect: 'manual' });
    const body = (await res.json()) as { message: string };
    assert.equal(res.status, 401, url);
    assert.equal(res.headers.get('set-cookie'), null, `${url} set a cookie`);
    assert.match(body.message, why);
  };
  const now = Date.now();
  const token = mintLoginToken(SECRET, now);
  // A HEAD (a link preview) does not use it up.
  assert.equal((await fetch(link(token), { method: 'HEAD' })).status, 200);
  const cookie = await openLoginLink(link(token));
  assert.equal((await fetch(`${ui}/json`, { headers: { cookie } })).status, 200);
  await refused(link(token), /^This login link was used already: run `wick ui-url`/);

  await refused(
    link(mintLoginToken(SECRET, now - 10 * 60_000)),
    /^This login link expired at \S+ \(it is \S+\): run `wick ui-url` for a new link/,
  );
  await refused(
    link(mintLoginToken(SECRET, now, 60 * 60_000)),
    /more than 15 minutes after now .*check this machine's clock/,
  );
  await refused(
    link(mintLoginToken('another-cluster-secret-000', now)),
    /^This login link was not made with this cluster's secret/,
  );
  await refused(
    link(`${token.slice(0, -3)}xyz`),
    /^This login link was not made with this cluster's secret/,
  );
  await refused(
    link('../../etc/passwd'),
    /^Invalid login token "..\/..\/etc\/passwd": expected <expiry>.<nonce>.<signature>/,
  );
  await refused(`${ui}/login`, /^This login link has no token/);

  // A link with a dashboard route moves on to it once logged in; any other `to` is ignored.
  const to = async (route: string) => {
    const url = `${link(mintLoginToken(SECRET, Date.now()))}&to=${encodeURIComponent(route)}`;
    const res = await fetch(url, { redirect: 'manual' });
    assert.equal(res.status, 200);
    return /url=([^"]*)"/.exec(await res.text())?.[1];
  };
  // Relative to /login: behind a path-based proxy (code-server's /proxy/PORT/) it stays there.
  assert.equal(await to('#/app/app-1'), './#/app/app-1');
  assert.equal(await to('https://evil.example/'), './');

  // A session past its 12 hours is refused, saying so.
  const old = `${sessionCookieName(SECRET)}=${mintSession(SECRET, now - SESSION_TTL_MS - 1000)}`;
  const r = await fetch(`${ui}/json`, { headers: { cookie: old } });
  assert.equal(r.status, 401);
  assert.match(((await r.json()) as { message: string }).message, /^Your login has expired/);
});

test('with authentication off (wick.authenticate=false), no route asks for a login', {
  timeout: 60_000,
}, async (t) => {
  const routes = await uiRoutes();
  const open = { 'wick.authenticate': false };
  const master = await startMaster(t, { conf: open });
  const worker = await startWorker(t, master.url, { cores: 1, conf: open });
  await master.waitForStderr(/Registering worker/);
  const app = 'app-20261202000000-0000';
  for (const [base, samples] of [
    [master.webUiUrl, plan(routes.master, masterSamples(worker.workerId, app), 'master')],
    [worker.webUiUrl, plan(routes.worker, workerSamples(app), 'worker')],
  ] as const) {
    for (const [route, s] of samples) {
      const r = await ask(base, s);
      if (route === 'GET /login') {
        assert.equal(r.status, 404, 'no login page when nothing needs a login');
        continue;
      }
      assert.notEqual(r.status, 401, `${base} ${route}: ${r.text}`);
      // Those that need no application answer as they do logged in.
      if (!s.url.includes(app) && !s.url.includes('9999')) {
        assert.equal(r.status, s.status, `${base} ${route}: ${r.text}`);
      }
    }
  }
});
