/**
 * Open Web UI as a user of a browser VS Code (this code-server) meets it: the address handed to
 * the user's browser is code-server's forwarding of the master's UI (/proxy/PORT/, from
 * vscode.env.asExternalUri), not 127.0.0.1 of the machine VS Code runs on; fetched as a browser
 * would, through code-server's proxy (which compresses), it logs in once and lands on the
 * dashboard, whose script and live feed answer under that prefix; and opened for real in this
 * browser, the tab shows the master's page (the "Wick Master at" heading the feed fills in).
 */
import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { SseClient } from '../../helpers/sse.js';
import { drive } from './dashboard.js';
import { type Api, setting, step, until, within } from './helpers.js';

export async function webUiSteps(api: Api): Promise<void> {
  const s = api.session;

  await step(
    "Open Web UI hands the browser the forwarded login link, which lands on the master's live dashboard",
    async () => {
      const state = await within(
        120_000,
        until(s, (m) => m.state),
        'the master state',
      );
      const uiPort = new URL(state.webUiUrl).port;
      const handed: vscode.Uri[] = [];
      const original = api.host.openExternal;
      api.host.openExternal = (uri) => {
        handed.push(uri);
        return Promise.resolve(true);
      };
      const restore = await setting('ui.openWebUiIn', 'external');
      let feed: SseClient | undefined;
      try {
        const r = (await vscode.commands.executeCommand('wick.openWebUi')) as
          | { url: string; via: string; login: boolean }
          | undefined;
        assert.ok(r?.via === 'external', `Open Web UI answered ${JSON.stringify(r)}`);
        const [uri, ...more] = handed;
        assert.ok(uri && more.length === 0, `one address handed to the browser: ${handed}`);
        const url = uri.toString(true);
        assert.equal(url, r.url);
        // The local cluster authenticates: the address is a one-time login link.
        assert.equal(r.login, true);
        if (vscode.env.uiKind === vscode.UIKind.Web) {
          // code-server tells the extension host its forwarding template (VSCODE_PROXY_URI).
          const template = process.env.VSCODE_PROXY_URI;
          const forwarded = template ? template.replace('{{port}}', uiPort) : `/proxy/${uiPort}/`;
          assert.ok(
            url.startsWith(`${forwarded}login?token=`) ||
              (!template && url.includes(`${forwarded}login?token=`)),
            `${url} is code-server's forwarding of ${state.webUiUrl} (${forwarded})`,
          );
        }

        // The browser's first request: the link logs in and the page moves on under the prefix.
        const login = await fetch(url, { redirect: 'manual' });
        const loginBody = await login.text();
        assert.equal(login.status, 200, loginBody.slice(0, 300));
        assert.match(loginBody, /url=\.\/"/, 'moves on relative to the login, under the prefix');
        const cookie = login.headers
          .getSetCookie()
          .map((c) => c.split(';')[0])
          .join('; ');
        assert.ok(cookie, 'the login sets its session cookie');
        const page = new URL('./', url);
        const dash = await fetch(page, { headers: { cookie } });
        const html = await dash.text();
        assert.equal(dash.status, 200, html.slice(0, 300));
        assert.match(dash.headers.get('content-type') ?? '', /^text\/html/);
        const src = /<script [^>]*src="([^"]+)"/.exec(html)?.[1];
        assert.ok(src && !src.startsWith('/'), `a script at a relative address: ${src}`);
        const script = await fetch(new URL(src, page), { headers: { cookie } });
        await script.arrayBuffer();
        assert.equal(script.status, 200, `the script ${src} under ${page.pathname}`);

        // The live feed, asked as a browser asks it (accepting gzip, which code-server's proxy
        // applies to what it may): the master's snapshot arrives, not held in a buffer.
        feed = await SseClient.open(new URL('api/events', page).toString(), {
          cookie,
          'accept-encoding': 'gzip, deflate',
        });
        assert.equal(feed.response.status, 200);
        const snapshot = JSON.parse(
          (
            await within(
              30_000,
              feed.nextOf('snapshot'),
              "the dashboard's first snapshot through the forwarding",
            )
          ).data,
        ) as { state: { url: string } };
        assert.equal(snapshot.state.url, state.url);

        // After that: the link was used once, and the feed answers nobody without the login.
        const again = await fetch(url, { redirect: 'manual' });
        assert.match(await again.text(), /used already/);
        assert.equal(again.status, 401);
        const anonymous = await fetch(new URL('api/events', page));
        await anonymous.text();
        assert.equal(anonymous.status, 401);
      } finally {
        feed?.close();
        api.host.openExternal = original;
        await restore();
      }
    },
  );

  await step(
    "Open Web UI in the user's browser shows the master's page, not a second workbench",
    async () => {
      await within(
        120_000,
        until(s, (m) => m.state),
        'the master state',
      );
      // The default (wick.ui.openWebUiIn: external), for real: openExternal of the forwarded
      // address opens a tab of this browser beside the workbench.
      const restore = await setting('ui.openWebUiIn', 'external');
      try {
        const r = (await vscode.commands.executeCommand('wick.openWebUi')) as
          | { url: string; via: string }
          | undefined;
        assert.ok(r?.via === 'external', `Open Web UI answered ${JSON.stringify(r)}`);
        const tab = await drive({
          action: 'popup',
          heading: '^Wick Master at ',
          name: 'web-ui-tab',
        });
        assert.ok(tab.url, 'the tab has an address');
        assert.doesNotMatch(tab.url, /[?&]folder=|\/login\?/, 'the master page, logged in');
      } finally {
        await restore();
      }
    },
  );
}
