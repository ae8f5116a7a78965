import type { Context, Hono } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import { html } from 'hono/html';
import type { WickConf } from '../conf/WickConf.js';
import { resolveClusterAuth } from '../rpc/clusterSecret.js';
import { isMetricsScrapeToken } from '../shared/metricsToken.js';
import {
  checkLoginToken,
  checkSession,
  isDashboardRoute,
  MASTER_UI,
  mintSession,
  SESSION_TTL_MS,
  sessionCookieName,
  UsedLinks,
} from '../shared/uiLogin.js';
import { PROMETHEUS_PATH } from './metrics/prometheusRoute.js';
import { bearerToken, checkScriptCredential } from './scriptCredential.js';

/**
 * The web UI behind the cluster's door: with authentication on, every page and API answers only
 * a browser logged in with a link from `wick ui-url` (uiLogin.ts), or a script that sends the
 * cluster secret as `Authorization: Bearer <secret>`; /metrics/prometheus also answers a scraper
 * sending the scrape token instead (metricsToken.ts); `/health` alone answers anyone. A browser
 * asking for a page without a login gets a page saying what to run; anything else gets JSON.
 */

/**
 * The secret the web UI checks: the one the daemon's RpcEnv authenticates with, found the one
 * way every process finds it (resolveClusterAuth), so that "authentication is on" means the same
 * here as on the RPC port. None: the cluster runs open (wick.authenticate=false, or no secret).
 */
export function uiClusterSecret(conf: WickConf): string | undefined {
  const auth = resolveClusterAuth(conf);
  return auth.mode === 'secret' ? auth.secret : undefined;
}

export interface UiAuthOptions {
  secret: string;
  /** The exact command that prints a login link for this UI, for the 401 answers. */
  loginCommand: () => string;
  /** Which UI this is, as login links name it (uiLogin.ts); undefined while it cannot say yet. */
  audience?: () => string | undefined;
  now?: () => number;
}

/** Mounts /login and, after it, the check every later route is behind. */
export function mountUiAuth(app: Hono, o: UiAuthOptions): void {
  const now = o.now ?? Date.now;
  const cookie = sessionCookieName(o.secret);
  const used = new UsedLinks();

  app.get('/login', (c) => {
    // A HEAD (a link preview, a prefetch) must not use up the link.
    if (c.req.method === 'HEAD') return c.body(null, 200);
    const t = now();
    const audience = o.audience ? o.audience() : MASTER_UI;
    if (audience === undefined) return c.text('This web UI is starting; try again\n', 503);
    const check = checkLoginToken(o.secret, c.req.query('token'), t, audience);
    if (!check.ok) return refuse(c, o, check.why);
    const claim = used.claim(check.nonce, check.expiry, t);
    if (claim === 'used') {
      return refuse(c, o, 'This login link was used already: run `wick ui-url` for a new one');
    }
    if (claim === 'full') {
      return c.text('Too many logins in the last minutes; try again in a few minutes\n', 503);
    }
    setCookie(c, cookie, mintSession(o.secret, t), {
      httpOnly: true,
      sameSite: 'Strict',
      path: '/',
      maxAge: SESSION_TTL_MS / 1000,
      secure: new URL(c.req.url).protocol === 'https:',
    });
    const to = c.req.query('to');
    // Relative to /login, so that behind a path-based proxy it stays under the proxy's prefix.
    const next = to !== undefined && isDashboardRoute(to) ? `./${to}` : './';
    // A page that moves on by itself rather than a 302: a Strict cookie set by a redirect that a
    // link on another site started is not sent with the redirected request, so that first
    // page would ask to log in again; a navigation this page starts is same-site.
    return c.html(
      html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="0; url=${next}">
<title>Logged in</title></head>
<body><p>Logged in. <a href="${next}">Open the dashboard</a>.</p></body></html>`,
      200,
      { 'Content-Security-Policy': "default-src 'none'" },
    );
  });

  app.use(async (c, next) => {
    const session = getCookie(c, cookie);
    if (session !== undefined) {
      const s = checkSession(o.secret, session, now());
      if (s === 'ok') return next();
      if (s === 'expired') {
        return refuse(c, o, 'Your login has expired (sessions last 12 hours)');
      }
    }
    const authorization = c.req.header('authorization');
    if (authorization !== undefined) {
      const credential = checkScriptCredential(authorization, o.secret);
      if (credential.ok) return next();
      const token = bearerToken(authorization);
      // The scrape token opens the metrics and nothing else (metricsToken.ts).
      if (
        token !== undefined &&
        c.req.path === PROMETHEUS_PATH &&
        isMetricsScrapeToken(token, o.secret)
      ) {
        return next();
      }
      return refuse(c, o, credential.why);
    }
    return refuse(c, o, 'This Wick web UI needs a login: its cluster authenticates');
  });
}

/** 401: a page for a browser that navigated here, JSON for everything else. */
function refuse(c: Context, o: UiAuthOptions, why: string): Response | Promise<Response> {
  const command = o.loginCommand();
  c.header('WWW-Authenticate', 'Bearer realm="wick"');
  c.header('Cache-Control', 'no-store');
  const accept = c.req.header('accept') ?? '';
  if (c.req.method === 'GET' && /\btext\/html\b/.test(accept)) {
    c.header('Content-Security-Policy', "default-src 'none'");
    return c.html(
      html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Log in to Wick</title></head>
<body>
<h1>Log in to Wick</h1>
<p>${why}.</p>
<p>On a machine that holds the cluster secret, run</p>
<pre>${command}</pre>
<p>and open the link it prints: it logs this browser in, and works once, for 5 minutes.</p>
<p>Scripts send the secret instead: <code>Authorization: Bearer &lt;cluster secret&gt;</code>.</p>
</body></html>`,
      401,
    );
  }
  return c.json(
    {
      error: 'unauthorized',
      message: `${why}. Log in with the link that \`${command}\` prints, or send Authorization: Bearer <cluster secret>.`,
    },
    401,
  );
}
