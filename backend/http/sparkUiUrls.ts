import type { Context } from 'hono';
import { MAX_ID_LENGTH } from '../protocol/bounds.js';
import type { RpcEndpointRef } from '../rpc/index.js';
import { askKill, crossSiteProblem, type KillPolicy } from './killApi.js';
import type { UiServer } from './UiServer.js';

/**
 * The master web UI's URLs that Spark's tools and habits use, on Wick's master: `/app/?appId=`
 * and `/driver/?id=` lead into the dashboard's page for that application or driver (the dashboard
 * routes by hash; a driver's page is its output, the one page the dashboard has for one driver),
 * and `POST /app/kill/?id=…&terminate=true` / `POST /driver/kill/?id=…&terminate=true` kill as
 * Spark's MasterWebUI does (spark.ui.killEnabled → wick.ui.killEnabled), answered as Spark answers
 * them, with a redirect to the master's page. They are guarded exactly as the dashboard's own
 * kill (killApi.ts): behind the UI's login when the cluster authenticates, and refused unless the
 * request carries the dashboard's header and no browser says it came from another site — so a
 * link, an image or a cross-site form cannot kill. Unlike Spark's, a refusal says why, with a
 * status, instead of redirecting as if it had worked; and `terminate` other than true is refused,
 * not ignored.
 */
export function mountSparkUiUrls(
  ui: UiServer,
  policy: KillPolicy,
  master: () => RpcEndpointRef | undefined,
): void {
  const page = (param: string, route: (id: string) => string) => (c: Context) => {
    const id = idParam(c, param);
    if (typeof id !== 'string') return c.text(`${id.error}\n`, 400);
    return c.redirect(`/#${route(encodeURIComponent(id))}`, 302);
  };
  const appPage = page('appId', (id) => `/app/${id}`);
  const driverPage = page('id', (id) => `/log?driverId=${id}&logType=stdout`);
  for (const path of ['/app', '/app/']) ui.app.get(path, appPage);
  for (const path of ['/driver', '/driver/']) ui.app.get(path, driverPage);

  const kill = (kind: 'app' | 'driver') => async (c: Context) => {
    const refuse = (status: 400 | 403, message: string) =>
      c.json({ success: false, message }, status);
    if (!policy.enabled)
      return refuse(403, 'Killing from the web UI is disabled (wick.ui.killEnabled=false)');
    const crossSite = crossSiteProblem(c);
    if (crossSite) return refuse(403, crossSite);
    const id = idParam(c, 'id');
    if (typeof id !== 'string') return refuse(400, id.error);
    const terminate = c.req.query('terminate');
    if (terminate !== 'true') {
      return refuse(
        400,
        `Expected terminate=true (as Spark's kill link sends), got ${terminate === undefined ? 'none' : JSON.stringify(terminate)}`,
      );
    }
    const answer = await askKill(master(), { kind, id });
    if (answer.status === 200 && answer.body.success) return c.redirect('/', 302);
    return c.json(answer.body, answer.status === 200 ? 400 : answer.status);
  };
  for (const kind of ['app', 'driver'] as const) {
    for (const path of [`/${kind}/kill`, `/${kind}/kill/`]) {
      ui.app.post(path, kill(kind));
      ui.app.all(path, (c) => {
        c.header('Allow', 'POST');
        return c.json({ success: false, message: 'A kill must be a POST' }, 405);
      });
    }
  }
}

/** An id parameter: present, bounded, and a plain name (what an app or driver id can be). */
function idParam(c: Context, name: string): string | { error: string } {
  const v = c.req.query(name);
  if (v === undefined || v === '') return { error: `Missing ?${name}=…` };
  if (v.length > MAX_ID_LENGTH || !/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(v)) {
    return {
      error: `Invalid ${name} ${JSON.stringify(v.slice(0, 100))}: expected an id such as app-20261130120000-0000 (letters, digits, . _ -; at most ${MAX_ID_LENGTH})`,
    };
  }
  return v;
}
