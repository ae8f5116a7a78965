/**
 * Kills from the web UI must never be an unauthenticated or cross-site way in: refused when
 * wick.ui.killEnabled is off, without a login when the cluster authenticates (however that was
 * turned on), by any method but POST, without the dashboard's header, from another origin or
 * site, and without a JSON body.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startMaster } from '../helpers/cluster.js';
import { checkNothingLeftRunning } from '../helpers/leaks.js';
import { appDescription, appIn, connectClient, MockApp } from '../helpers/masterMocks.js';
import { logIn, submitStdinApp } from '../helpers/webUi.js';

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
  assert.match(first, /"capabilities":\{"killEnabled":false\}/);
  const r = await kill(master.webUiUrl, { kind: 'app', id: 'app-20261130000000-0000' });
  assert.equal(r.status, 403);
  assert.match(r.json.message ?? '', /wick\.ui\.killEnabled=false/);
});

/** The two ways (three spellings) of turning authentication on, each with how `wick submit` is given it. */
function authModes(dir: string): {
  how: string;
  master: { env?: NodeJS.ProcessEnv; conf?: Record<string, string> };
  submit: { env?: NodeJS.ProcessEnv; args?: string[] };
}[] {
  const file = join(dir, 'cluster-secret');
  writeFileSync(file, `${SECRET}\n`, { mode: 0o600 });
  return [
    {
      how: 'WICK_AUTH_SECRET alone',
      master: { env: { WICK_AUTH_SECRET: SECRET } },
      submit: { env: { WICK_AUTH_SECRET: SECRET } },
    },
    {
      how: '--conf wick.authenticate.secret',
      master: { conf: { 'wick.authenticate.secret': SECRET } },
      submit: { args: ['--conf', `wick.authenticate.secret=${SECRET}`] },
    },
    {
      how: 'a secret file',
      master: { conf: { 'wick.authenticate.secret.file': file } },
      submit: { args: ['--conf', `wick.authenticate.secret.file=${file}`] },
    },
  ];
}

const SECRET = 'correct horse battery staple';

test('with authentication on, however it is turned on, a kill needs a login: nothing is killed without one', {
  timeout: 180_000,
}, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'wick-kill-auth-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  for (const mode of authModes(dir)) {
    await t.test(mode.how, async (t) => {
      const master = await startMaster(t, mode.master);
      const app = await submitStdinApp(t, master.url, `Kill auth ${mode.how}`, mode.submit);
      const asScript = { authorization: `Bearer ${SECRET}` };
      const appState = async () => {
        const json = (await (
          await fetch(`${master.webUiUrl}/json`, { headers: asScript })
        ).json()) as {
          activeapps: { id: string; state: string }[];
          completedapps: { id: string; state: string }[];
        };
        return [...json.activeapps, ...json.completedapps];
      };
      const [registered] = await appState();
      assert.ok(registered, 'the application registered');
      const target = { kind: 'app', id: registered.id };
      for (const [what, headers] of [
        ['no credentials', DASHBOARD],
        ['the secret in the old kill header', { ...DASHBOARD, 'x-wick-secret': SECRET }],
        ['a wrong secret', { ...DASHBOARD, authorization: 'Bearer guess' }],
        ['a prefix of it', { ...DASHBOARD, authorization: `Bearer ${SECRET.slice(0, 7)}` }],
      ] as const) {
        const r = await kill(master.webUiUrl, target, headers);
        assert.equal(r.status, 401, `${mode.how}, ${what}: ${JSON.stringify(r.json)}`);
        assert.match(r.json.message ?? '', /wick ui-url --master/, what);
      }
      assert.deepEqual(
        (await appState()).map((a) => a.state),
        ['WAITING'],
        `${mode.how}: a refused kill killed`,
      );
      // A login does not open the other doors: another origin, or a GET, is still refused.
      const cookie = await logIn(master.webUiUrl, SECRET);
      const crossSite = await kill(master.webUiUrl, target, {
        ...DASHBOARD,
        cookie,
        origin: 'http://evil.example',
      });
      assert.equal(crossSite.status, 403);
      assert.equal((await kill(master.webUiUrl, target, { cookie }, 'GET')).status, 405);
      // Logged in, from the dashboard: killed.
      const ok = await kill(master.webUiUrl, target, { ...DASHBOARD, cookie });
      assert.deepEqual([ok.status, ok.json.success], [200, true], JSON.stringify(ok.json));
      assert.deepEqual(
        (await appState()).map((a) => [a.id, a.state]),
        [[registered.id, 'KILLED']],
      );
      app.child.kill('SIGKILL');
    });
  }
});
