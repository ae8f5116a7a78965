import type { Context } from 'hono';
import { MAX_HOST_LENGTH } from '../protocol/bounds.js';
import { DecommissionWorkersOnHosts, MAX_DECOMMISSION_TARGETS } from '../protocol/client.js';
import type { RpcEndpointRef } from '../rpc/index.js';
import { crossSiteProblem, type KillPolicy } from './killApi.js';
import type { UiServer } from './UiServer.js';

/**
 * Spark 3.1's `POST /workers/kill/?host=…` (several `host`s may be given) on the master's web UI:
 * decommissions every worker on those hosts (DecommissionWorkersOnHosts). Answered as Spark's:
 * 200 when it decommissioned a worker, 404 when no registered worker is on those hosts. Guarded
 * as the UI's kills (sparkUiUrls.ts): wick.ui.killEnabled, behind the UI's login when the cluster
 * authenticates, and only with the dashboard's header and no browser saying it came from another
 * site (Spark guards it with spark.master.ui.decommission.allow.mode, LOCAL by default: Wick's
 * login and header do that job wherever the request comes from).
 */
export function mountWorkerDecommission(
  ui: UiServer,
  policy: KillPolicy,
  master: () => RpcEndpointRef | undefined,
): void {
  const decommission = async (c: Context) => {
    const refuse = (status: 400 | 403 | 404 | 502 | 503, message: string) =>
      c.json({ success: false, message }, status);
    if (!policy.enabled) {
      return refuse(403, 'Decommissioning from the web UI is disabled (wick.ui.killEnabled=false)');
    }
    const crossSite = crossSiteProblem(c);
    if (crossSite) return refuse(403, crossSite);
    const hosts = c.req.queries('host') ?? [];
    const problem = hostsProblem(hosts);
    if (problem) return refuse(400, problem);
    const ref = master();
    if (!ref) return refuse(503, 'The master is not ready');
    let reply: { success: boolean; message: string; workerIds: string[] };
    try {
      reply = await ref.ask(DecommissionWorkersOnHosts({ hostnames: hosts }), { timeout: 30_000 });
    } catch (err) {
      return refuse(502, `The master did not answer: ${(err as Error).message}`);
    }
    return c.json(reply, reply.success ? 200 : 404);
  };
  for (const path of ['/workers/kill', '/workers/kill/']) {
    ui.app.post(path, decommission);
    ui.app.all(path, (c) => {
      c.header('Allow', 'POST');
      return c.json({ success: false, message: 'A decommission must be a POST' }, 405);
    });
  }
}

function hostsProblem(hosts: readonly string[]): string | undefined {
  if (hosts.length === 0) return 'Missing ?host=…: the host whose workers to decommission';
  if (hosts.length > MAX_DECOMMISSION_TARGETS) {
    return `${hosts.length} hosts: at most ${MAX_DECOMMISSION_TARGETS} at once`;
  }
  const bad = hosts.find((h) => h.length === 0 || h.length > MAX_HOST_LENGTH || /[\s/]/.test(h));
  if (bad !== undefined) {
    return `Invalid host ${JSON.stringify(bad.slice(0, 100))}: expected a host name or address (at most ${MAX_HOST_LENGTH} characters, no spaces or slashes)`;
  }
  return undefined;
}
