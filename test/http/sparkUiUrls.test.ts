/**
 * The master web UI URLs Spark's tools use, against a real master process: /app/?appId= and
 * /driver/?id= lead into the dashboard; POST /app/kill/?id=…&terminate=true and
 * /driver/kill/?id=…&terminate=true kill as Spark's do, guarded as the dashboard's own kill is
 * (login, the dashboard's header, same origin, POST only, wick.ui.killEnabled).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startMaster } from '../helpers/cluster.js';
import { checkNothingLeftRunning } from '../helpers/leaks.js';
import { appDescription, appIn, connectClient, MockApp } from '../helpers/masterMocks.js';
import { uiFetch } from '../helpers/webUi.js';

checkNothingLeftRunning();

const HEADER = { 'x-wick-request': '1' };

async function call(url: string, init: RequestInit = {}) {
  const res = await uiFetch(url, { redirect: 'manual', ...init });
  const text = await res.text();
  return { status: res.status, location: res.headers.get('location'), text };
}

test('/app/?appId= and /driver/?id= redirect into the dashboard; behind the login', {
  timeout: 30_000,
}, async (t) => {
  const master = await startMaster(t);
  const base = master.webUiUrl;
  const app = await call(`${base}/app/?appId=app-20261207000000-0001`);
  assert.deepEqual([app.status, app.location], [302, '/#/app/app-20261207000000-0001']);
  assert.equal((await call(`${base}/app?appId=app-1`)).location, '/#/app/app-1');
  const driver = await call(`${base}/driver/?id=driver-20261207000000-0002`);
  assert.deepEqual(
    [driver.status, driver.location],
    [302, '/#/log?driverId=driver-20261207000000-0002&logType=stdout'],
  );
  const bad = await call(`${base}/app/?appId=${encodeURIComponent('../x"<')}`);
  assert.equal(bad.status, 400);
  assert.match(bad.text, /Invalid appId/);
  assert.equal((await call(`${base}/driver/`)).status, 400);
  // Without the cluster's credential: the login, not the redirect.
  const anon = await fetch(`${base}/app/?appId=app-1`, { redirect: 'manual' });
  assert.equal(anon.status, 401);
});

test('POST /app/kill/?id=&terminate=true kills as Spark does; nothing else kills', {
  timeout: 30_000,
}, async (t) => {
  const master = await startMaster(t);
  const client = await connectClient(t, master.url);
  const base = master.webUiUrl;
  const appId = await (await MockApp.start(t, master.url)).register(appDescription());
  const url = `${base}/app/kill/?id=${appId}&terminate=true`;

  const refused: [string, Promise<{ status: number; text: string }>, number][] = [
    ['GET', call(url, { headers: HEADER }), 405],
    ['without the dashboard header', call(url, { method: 'POST' }), 403],
    [
      'from another origin',
      call(url, { method: 'POST', headers: { ...HEADER, origin: 'http://evil.example' } }),
      403,
    ],
    [
      'cross-site',
      call(url, { method: 'POST', headers: { ...HEADER, 'sec-fetch-site': 'cross-site' } }),
      403,
    ],
    [
      'without terminate=true',
      call(`${base}/app/kill/?id=${appId}`, { method: 'POST', headers: HEADER }),
      400,
    ],
    [
      'with a bad id',
      call(`${base}/app/kill/?id=..%2Fx&terminate=true`, { method: 'POST', headers: HEADER }),
      400,
    ],
  ];
  for (const [what, pending, status] of refused) {
    const r = await pending;
    assert.equal(r.status, status, `${what}: ${r.text}`);
  }
  const anon = await fetch(url, { method: 'POST', headers: HEADER, redirect: 'manual' });
  assert.equal(anon.status, 401, 'without the credential');
  assert.equal(appIn(await client.state(), appId)?.state, 'WAITING');

  const ok = await call(url, { method: 'POST', headers: HEADER });
  assert.deepEqual([ok.status, ok.location], [302, '/'], ok.text);
  await client.waitFor((s) => appIn(s, appId)?.state === 'KILLED');

  // A driver the master does not know: refused with the master's words.
  const none = await call(`${base}/driver/kill/?id=driver-20261207000000-0042&terminate=true`, {
    method: 'POST',
    headers: HEADER,
  });
  assert.equal(none.status, 400);
  assert.match(none.text, /driver-20261207000000-0042/);
});

test('with wick.ui.killEnabled=false, POST /app/kill/ kills nothing', {
  timeout: 30_000,
}, async (t) => {
  const master = await startMaster(t, { conf: { 'wick.ui.killEnabled': false } });
  const client = await connectClient(t, master.url);
  const appId = await (await MockApp.start(t, master.url)).register(appDescription());
  const r = await call(`${master.webUiUrl}/app/kill/?id=${appId}&terminate=true`, {
    method: 'POST',
    headers: HEADER,
  });
  assert.equal(r.status, 403);
  assert.match(r.text, /wick\.ui\.killEnabled=false/);
  assert.equal(appIn(await client.state(), appId)?.state, 'WAITING');
});
