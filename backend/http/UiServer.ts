import type http from 'node:http';
import { createAdaptorServer } from '@hono/node-server';
import { Hono } from 'hono';
import type { DashboardConfig } from '../../webview/protocol.js';
import { contentSecurityPolicy, dashboardHtml } from '../shared/dashboardPage.js';
import { bindWithRetries } from '../util/bind.js';
import { loadDashboardAssets, newNonce } from './dashboardAssets.js';
import { closeAll, type SseChannel } from './sse.js';

/**
 * What the master's and the workers' web UIs share: a Hono app (routing, typed request and
 * response helpers, Server-Sent Events) on Node's http server, bound as Spark binds its UI ports
 * (wick.port.maxRetries), the dashboard page and its two files, and security headers on every
 * answer. Hono was chosen over hand-written routing for its small size, no dependencies and
 * web-standard Request/Response, which keep handlers short and testable.
 */
export class UiServer {
  readonly app = new Hono();
  /** Open event streams, ended on stop. */
  readonly streams = new Set<SseChannel>();
  private server: http.Server | undefined;
  port = 0;

  constructor(private readonly page: () => { config: DashboardConfig; title: string }) {
    this.app.use(async (c, next) => {
      await next();
      c.header('X-Content-Type-Options', 'nosniff');
      c.header('Referrer-Policy', 'no-referrer');
      c.header('X-Frame-Options', 'DENY');
      c.header('Cross-Origin-Resource-Policy', 'same-origin');
      if (!c.res.headers.has('cache-control')) c.header('Cache-Control', 'no-store');
    });
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
          scriptUri: '/static/webview.js',
          styleUri: '/static/webview.css',
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

  async listen(name: string, host: string, port: number, maxRetries: number): Promise<number> {
    const server = createAdaptorServer({
      fetch: this.app.fetch,
      overrideGlobalObjects: false,
    }) as http.Server;
    server.on('clientError', (_err, socket) => socket.destroy());
    this.port = await bindWithRetries(server, name, host, port, maxRetries);
    this.server = server;
    return this.port;
  }

  stop(): Promise<void> {
    closeAll(this.streams);
    const server = this.server;
    if (!server) return Promise.resolve();
    return new Promise((r) => {
      server.close(() => r());
      server.closeAllConnections();
    });
  }
}
