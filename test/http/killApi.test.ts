/**
 * Kills from the web UI must never be an unauthenticated or cross-site way in: refused when
 * wick.ui.killEnabled is off, without the secret when wick.authenticate is on, by any method but
 * POST, without the dashboard's header, from another origin or site, and without a JSON body.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startMaster } from '../helpers/cluster.js';
import { checkNothingLeftRunning } from '../helpers/leaks.js';
import { appDescription, appIn, connectClient, MockApp } from '../helpers/masterMocks.js';

checkNothingLeftRunning();

const DASHBOARD = { 'content-type': 'application/json', 'x-wick-request': '1' };

async function kill(
  base: string,
  body: unknown,
  headers: Record<string, string> = DASHBOARD,
  method = 'POST',
): Promise<{ status: number; json: { success?: boolean; message?: string } }> {
  const res = await fetch(`${base}/api/kill`, {
    method,
    headers,
    ...(method === 'GET' || method === 'HEAD' ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : {} };
}

test('a kill from the dashboard kills; any other request is refused and kills nothing', {
  timeout: 30_000,
}, async (t) => {
  const master = await startMaster(t);
  const client = await connectClient(t, master.url);
  const app = await MockApp.start(t, master.url);
  const appId = await app.register(appDescription());
  const target = { kind: 'app', id: appId };
  const base = master.webUiUrl;

  const refused: [
    string,
    Promise<{ status: number; json: { success?: boolean; message?: string } }>,
    number,
  ][] = [
    ['GET', kill(base, target, DASHBOARD, 'GET'), 405],
    ['PUT', kill(base, target, DASHBOARD, 'PUT'), 405],
    [
      'GET with a query',
      fetch(`${base}/api/kill?kind=app&id=${appId}`).then(async (r) => ({
        status: r.status,
        json: (await r.json()) as { success?: boolean; message?: string },
      })),
      405,
    ],
    ['no dashboard header', kill(base, target, { 'content-type': 'application/json' }), 403],
    ['another origin', kill(base, target, { ...DASHBOARD, origin: 'http://evil.example' }), 403],
    ['an opaque origin', kill(base, target, { ...DASHBOARD, origin: 'null' }), 403],
    ['cross-site', kill(base, target, { ...DASHBOARD, 'sec-fetch-site': 'cross-site' }), 403],
    [
      'same-site, other origin',
      kill(base, target, { ...DASHBOARD, 'sec-fetch-site': 'same-site' }),
      403,
    ],
    [
      'a form post',
      kill(base, target, {
        'content-type': 'application/x-www-form-urlencoded',
        'x-wick-request': '1',
      }),
      415,
    ],
    ['a bad body', kill(base, { kind: 'worker', id: 'x' }), 400],
  ];
  for (const [what, pending, status] of refused) {
    const r = await pending;
    assert.equal(r.status, status, `${what}: ${JSON.stringify(r.json)}`);
    assert.equal(r.json.success, false, what);
  }
  assert.equal(appIn(await client.state(), appId)?.state, 'WAITING');

  // The same origin, as the page sends it, does kill.
  const host = new URL(base).host;
  const ok = await kill(base, target, {
    ...DASHBOARD,
    origin: `http://${host}`,
    'sec-fetch-site': 'same-origin',
  });
  assert.equal(ok.status, 200, JSON.stringify(ok.json));
  assert.equal(ok.json.success, true);
  await client.waitFor((s) => appIn(s, appId)?.state === 'KILLED');
  // A driver the master does not know: the master's answer, passed on.
  const none = await kill(base, { kind: 'driver', id: 'driver-20261130000000-0042' });
  assert.equal(none.status, 200);
  assert.equal(none.json.success, false);
  assert.match(none.json.message ?? '', /driver-20261130000000-0042/);
});

test('with wick.ui.killEnabled=false the web UI kills nothing', { timeout: 60_000 }, async (t) => {
  const master = await startMaster(t, { conf: { 'wick.ui.killEnabled': false } });
  const events = await fetch(`${master.webUiUrl}/api/events`);
  const reader = events.body?.getReader();
  const first = new TextDecoder().decode((await reader?.read())?.value);
  await reader?.cancel();
  assert.match(first, /"capabilities":\{"killEnabled":false,"killNeedsSecret":false\}/);
  const r = await kill(master.webUiUrl, { kind: 'app', id: 'app-20261130000000-0000' });
  assert.equal(r.status, 403);
  assert.match(r.json.message ?? '', /wick\.ui\.killEnabled=false/);
});

test('with wick.authenticate on, a kill needs the secret', { timeout: 60_000 }, async (t) => {
  const secret = 'correct horse battery staple';
  const master = await startMaster(t, {
    conf: { 'wick.authenticate': true, 'wick.authenticate.secret': secret },
  });
  const target = { kind: 'app', id: 'app-20261130000000-0000' };
  for (const [what, headers] of [
    ['no secret', DASHBOARD],
    ['a wrong secret', { ...DASHBOARD, 'x-wick-secret': 'guess' }],
    ['a prefix of it', { ...DASHBOARD, 'x-wick-secret': secret.slice(0, 7) }],
    ['an empty one', { ...DASHBOARD, 'x-wick-secret': '' }],
  ] as const) {
    const r = await kill(master.webUiUrl, target, headers);
    assert.equal(r.status, 401, what);
    assert.match(r.json.message ?? '', /secret/, what);
  }
  // The secret does not open the other doors.
  const crossSite = await kill(master.webUiUrl, target, {
    ...DASHBOARD,
    'x-wick-secret': secret,
    origin: 'http://evil.example',
  });
  assert.equal(crossSite.status, 403);
  const get = await kill(master.webUiUrl, target, { 'x-wick-secret': secret }, 'GET');
  assert.equal(get.status, 405);
  // With it, the master is asked (and says it knows no such application).
  const ok = await kill(master.webUiUrl, target, { ...DASHBOARD, 'x-wick-secret': secret });
  assert.equal(ok.status, 200, JSON.stringify(ok.json));
  assert.equal(ok.json.success, false);
});
