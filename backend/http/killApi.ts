import { Value } from '@sinclair/typebox/value';
import type { Context } from 'hono';
import { KillTarget } from '../../webview/protocol.js';
import { RequestKillApplication, RequestKillDriver } from '../protocol/client.js';
import type { RpcEndpointRef } from '../rpc/index.js';
import type { UiServer } from './UiServer.js';

/** The header the dashboard sets on its POSTs; a cross-site form or image cannot set it. */
export const CSRF_HEADER = 'x-wick-request';

export interface KillPolicy {
  /** wick.ui.killEnabled */
  enabled: boolean;
}

/**
 * POST /api/kill {kind: "app" | "driver", id}: the only action the web UI offers, and the page
 * must never become an unauthenticated way to take it. In order: refused unless
 * wick.ui.killEnabled; only a same-origin request from the dashboard (custom header, which a
 * cross-site page cannot send without a CORS preflight that this server never grants, and the
 * Origin and Sec-Fetch-Site headers when the browser sends them); and a JSON body. When the
 * cluster authenticates, the request has passed the UI's login check already (uiAuth.ts: a
 * session cookie, SameSite=Strict, or the secret as a Bearer token), so the dialog no longer asks
 * for the secret. Any other method is refused, so no link or image can kill.
 */
export function mountKillApi(
  ui: UiServer,
  policy: KillPolicy,
  master: () => RpcEndpointRef | undefined,
): void {
  ui.app.post('/api/kill', async (c) => {
    const refuse = (status: 400 | 403 | 415 | 503, message: string) =>
      c.json({ success: false, message }, status);
    if (!policy.enabled)
      return refuse(403, 'Killing from the web UI is disabled (wick.ui.killEnabled=false)');
    const crossSite = crossSiteProblem(c);
    if (crossSite) return refuse(403, crossSite);
    if (!(c.req.header('content-type') ?? '').toLowerCase().startsWith('application/json')) {
      return refuse(415, 'Expected a JSON body (Content-Type: application/json)');
    }
    const target: unknown = await c.req.json().catch(() => undefined);
    if (!Value.Check(KillTarget, target)) {
      return refuse(400, 'Expected {"kind": "app" | "driver", "id": "…"}');
    }
    const answer = await askKill(master(), target);
    return c.json(answer.body, answer.status);
  });
  ui.app.all('/api/kill', (c) => {
    c.header('Allow', 'POST');
    return c.json({ success: false, message: 'A kill must be a POST from the dashboard' }, 405);
  });
}

/** How the master answered a kill, as an HTTP status and body. */
export interface KillAnswer {
  status: 200 | 502 | 503;
  body: { success: boolean; message: string };
}

/** Asks the master to kill an application or a driver (RequestKillApplication / RequestKillDriver). */
export async function askKill(
  ref: RpcEndpointRef | undefined,
  target: KillTarget,
): Promise<KillAnswer> {
  if (!ref) return { status: 503, body: { success: false, message: 'The master is not ready' } };
  try {
    const r =
      target.kind === 'app'
        ? await ref.ask(RequestKillApplication({ appId: target.id }), { timeout: 30_000 })
        : await ref.ask(RequestKillDriver({ driverId: target.id }), { timeout: 30_000 });
    return { status: 200, body: { success: r.success, message: r.message } };
  } catch (err) {
    return {
      status: 502,
      body: { success: false, message: `The master did not answer: ${(err as Error).message}` },
    };
  }
}

/**
 * Why a state-changing request may not be the dashboard's own (a cross-site form, link or
 * script): the custom header is missing, or the browser says it came from another site.
 */
export function crossSiteProblem(c: Context): string | undefined {
  if (c.req.header(CSRF_HEADER) !== '1') {
    return `Refused: a kill must come from the dashboard (header ${CSRF_HEADER}: 1)`;
  }
  const site = c.req.header('sec-fetch-site');
  if (site !== undefined && site !== 'same-origin' && site !== 'none') {
    return `Refused: a cross-site request (Sec-Fetch-Site: ${site})`;
  }
  const origin = c.req.header('origin');
  const host = c.req.header('host');
  if (origin !== undefined && origin !== 'null' && host !== undefined) {
    let originHost: string | undefined;
    try {
      originHost = new URL(origin).host;
    } catch {
      originHost = undefined;
    }
    if (originHost !== host) return `Refused: a request from another origin (${origin})`;
  } else if (origin === 'null') {
    return 'Refused: a request from an opaque origin';
  }
  return undefined;
}
