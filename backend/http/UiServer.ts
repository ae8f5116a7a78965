import type http from 'node:http';
import net from 'node:net';
import { createAdaptorServer } from '@hono/node-server';
import { Hono } from 'hono';
import type { DashboardConfig } from '../../webview/protocol.js';
import type { WireSecurity } from '../rpc/tls/WireSecurity.js';
import { contentSecurityPolicy, dashboardHtml } from '../shared/dashboardPage.js';
import { bindWithRetries } from '../util/bind.js';
import { answerClientErrors, refuseBadUrls } from './badRequests.js';
import { loadDashboardAssets, newNonce } from './dashboardAssets.js';
import { closeAll, type SseChannel } from './sse.js';
import { mountUiAuth } from './uiAuth.js';

/** How a UI server checks its visitors: undefined when the cluster runs open. */
export interface UiServerAuth {
  secret: string;
  /** The command that prints a login link for this UI (`wick ui-url …`). */
  loginCommand: () => string;
  /** Which UI this is, as login links name it (shared/uiLogin.ts); default the master's. */
  audience?: () => string | undefined;
}

/**
 * What the master's and the workers' web UIs share: a Hono app (routing, typed request and
 * response helpers, Server-Sent Events) on Node's http server, bound as Spark binds its UI ports
 * (wick.port.maxRetries), the dashboard page and its two files, and security headers on every
 * answer. Hono was chosen over hand-written routing for its small size, no dependencies and
 * web-standard Request/Response, which keep handlers short and testable. In order, before any
 * route of the host's: security headers on every answer, a 400 for a URL that does not decode,
 * `/health` (for anyone), and, when the cluster authenticates, the login check (uiAuth.ts).
 */
export class UiServer {
  readonly app = new Hono();
  /** Open event streams, ended on stop. */
  readonly streams = new Set<SseChannel>();
  private server: http.Server | undefined;
  /** The TLS front that listens in the http server's place, when it serves https. */
  private front: net.Server | undefined;
  port = 0;
  /** `https` when this UI serves TLS (listen's `security`), else `http`. */
  scheme: 'http' | 'https' = 'http';

  constructor(
    private readonly page: () => { config: DashboardConfig; title: string },
    auth: UiServerAuth | undefined,
    /** `/health` for anyone (false: a server whose every answer needs a credential). */
    health = true,
  ) {
    this.app.use(async (c, next) => {
      await next();
      c.header('X-Content-Type-Options', 'nosniff');
      c.header('Referrer-Policy', 'no-referrer');
      c.header('X-Frame-Options', 'DENY');
      c.header('Cross-Origin-Resource-Policy', 'same-origin');
      if (!c.res.headers.has('cache-control')) c.header('Cache-Control', 'no-store');
    });
    this.app.use(refuseBadUrls);
    // Before the login check, which runs only for the routes registered after it.
    if (health) this.app.get('/health', (c) => c.text('ok\n'));
    if (auth) mountUiAuth(this.app, auth);
  }

  /** Every route and middleware the app has, as Hono lists them (the tests visit each). */
  get routes(): { method: string; path: string }[] {
    const seen = new Set<string>();
    const out: { method: string; path: string }[] = [];
    for (const r of this.app.routes) {
      const key = `${r.method} ${r.path}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push({ method: r.method, path: r.path });
    }
    return out;
  }

  /** Adds the page and its assets, after the host's own routes; then the 404 answer. */
  async mountDashboard(): Promise<void> {
    const assets = await loadDashboardAssets();
    const page = (c: import('hono').Context) => {
      if (!assets) {
        return c.text(
          'The dashboard is not built: run `npm run build`. The JSON API works.\n',
          503,
        );
      }
      const nonce = newNonce();
      const { config, title } = this.page();
      c.header('Content-Security-Policy', contentSecurityPolicy(nonce));
      return c.html(
        dashboardHtml({
          nonce,
          // Relative: the page also works under a path-based proxy (code-server's /proxy/PORT/).
          scriptUri: 'static/webview.js',
          styleUri: 'static/webview.css',
          config,
          title,
        }),
      );
    };
    this.app.get('/', page);
    this.app.get('/index.html', page);
    this.app.get('/static/webview.js', (c) =>
      assets
        ? c.body(new Uint8Array(assets.js), 200, {
            'Content-Type': 'text/javascript; charset=utf-8',
            'Cache-Control': 'no-cache',
          })
        : c.notFound(),
    );
    this.app.get('/static/webview.css', (c) =>
      assets
        ? c.body(new Uint8Array(assets.css), 200, {
            'Content-Type': 'text/css; charset=utf-8',
            'Cache-Control': 'no-cache',
          })
        : c.notFound(),
    );
    this.app.notFound((c) => c.text('Not found.\n', 404));
    this.app.onError((err, c) => c.text(`Internal error: ${err.message}\n`, 500));
  }

  /**
   * Binds the UI. With a `security` that serves TLS (a bind address other than loopback), https:
   * the port's TLS front (WireSecurity.accept) hands each TLS connection to the http server, and
   * answers plain http from another machine with a 400 that names the https address, rather than
   * a redirect: the request has already crossed the wire in the clear (a script's Bearer secret
   * with it), and a redirect would make that habit work.
   */
  async listen(
    name: string,
    host: string,
    port: number,
    maxRetries: number,
    security?: WireSecurity,
  ): Promise<number> {
    const server = createAdaptorServer({
      fetch: this.app.fetch,
      overrideGlobalObjects: false,
    }) as http.Server;
    answerClientErrors(server);
    this.server = server;
    if (!security?.serves) {
      this.port = await bindWithRetries(server, name, host, port, maxRetries);
      return this.port;
    }
    const front = net.createServer((socket) =>
      security.accept(
        socket,
        ({ stream }) => server.emit('connection', stream),
        (s) => refusePlainHttp(s, host, this.port, security.fingerprint as string),
      ),
    );
    this.port = await bindWithRetries(front, name, host, port, maxRetries);
    this.front = front;
    this.scheme = 'https';
    return this.port;
  }

  stop(): Promise<void> {
    closeAll(this.streams);
    const server = this.server;
    if (!server) return Promise.resolve();
    const front = this.front;
    const frontClosed = new Promise<void>((r) => (front ? front.close(() => r()) : r()));
    const closed = new Promise<void>((r) => {
      if (front) r();
      else server.close(() => r());
    });
    server.closeAllConnections();
    return Promise.all([closed, frontClosed]).then(() => undefined);
  }
}

function refusePlainHttp(
  socket: net.Socket,
  host: string,
  port: number,
  fingerprint: string,
): void {
  const url = `https://${host.includes(':') ? `[${host}]` : host}:${port}/`;
  const body = `This Wick web UI speaks https only: open ${url} (its certificate: ${fingerprint}; \`wick ui-url\` prints a login link for it).\n`;
  socket.end(
    `HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
  setTimeout(() => socket.destroy(), 1_000).unref();
}
