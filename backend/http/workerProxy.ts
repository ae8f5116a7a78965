import type { LogFollower } from '../client/LogFollower.js';
import { bytesOf } from '../protocol/base64.js';
import { RequestLogRange, RequestWorkerState } from '../protocol/worker.js';
import type { RpcEndpointRef } from '../rpc/index.js';
import { logFields } from '../shared/logSource.js';
import { failure, mountLogApi } from './logApi.js';
import { parseLogRequest } from './logParams.js';
import type { UiServer } from './UiServer.js';
import { sparkWorkerJson } from './WorkerWebUI.js';

/** A worker id as workers make them (worker-yyyyMMddHHmmss-host-port); nothing else reaches RPC. */
const WORKER_ID = /^worker-[A-Za-z0-9_.:-]{1,190}$/;

const ASK_TIMEOUT_MS = 30_000;

/** Why a path's worker id is refused, or undefined when it is well formed. */
export function badWorkerId(workerId: string): string | undefined {
  if (WORKER_ID.test(workerId)) return undefined;
  return `Invalid workerId ${JSON.stringify(workerId)}: expected a worker id such as worker-20261130120000-10.0.0.5-41234`;
}

/**
 * The master's web UI as a reverse proxy for every worker's (Spark's spark.ui.reverseProxy, which
 * serves each worker's UI under /proxy/<workerId>/): a browser that can reach only the master
 * still gets a worker's /json, its /log page and the dashboard's log API, asked of the worker over
 * RPC from the master's RpcEnv (over the connection the worker opened). The worker checks every
 * path as for its own pages (resolveLogPath): the proxy adds a check of the worker id and passes
 * nothing else of the URL on.
 */
export function mountWorkerProxy(
  ui: UiServer,
  follower: () => LogFollower | undefined,
  workerRef: (workerId: string) => RpcEndpointRef | string,
): void {
  const app = ui.app;
  app.use('/proxy/:workerId/*', async (c, next) => {
    const bad = badWorkerId(c.req.param('workerId'));
    if (bad) return c.text(`${bad}\n`, 400);
    await next();
  });

  // The worker's page is the dashboard's own, whose data comes through the master.
  const page = (workerId: string) => `/#/worker/${encodeURIComponent(workerId)}`;
  app.get('/proxy/:workerId', (c) => {
    const bad = badWorkerId(c.req.param('workerId'));
    return bad ? c.text(`${bad}\n`, 400) : c.redirect(page(c.req.param('workerId')));
  });
  app.get('/proxy/:workerId/', (c) => c.redirect(page(c.req.param('workerId'))));

  app.get('/proxy/:workerId/json', async (c) => {
    const ref = workerRef(c.req.param('workerId'));
    if (typeof ref === 'string') return c.text(`${ref}\n`, 404);
    try {
      return c.json(
        sparkWorkerJson(await ref.ask(RequestWorkerState({}), { timeout: ASK_TIMEOUT_MS })),
      );
    } catch (err) {
      return failure(c, err);
    }
  });

  // Spark's plain-text log page, with the worker's header (the file named relative to its work dir).
  app.get('/proxy/:workerId/log', async (c) => {
    const req = parseLogRequest((n) => c.req.query(n));
    if (typeof req === 'string') return c.text(`Error: ${req}\n`, 400);
    const ref = workerRef(c.req.param('workerId'));
    if (typeof ref === 'string') return c.text(`Error: ${ref}\n`, 404);
    try {
      const r = await ref.ask(
        RequestLogRange({
          ...logFields(req.source, req.stream),
          ...(req.offset !== undefined ? { offset: req.offset } : {}),
          length: req.length,
        }),
        { timeout: ASK_TIMEOUT_MS },
      );
      const data = bytesOf(r, 'data');
      const file =
        'driverId' in req.source
          ? `${req.source.driverId}/${req.stream}`
          : `${req.source.appId}/${req.source.execId}/${req.stream}`;
      const header = `==== Bytes ${r.offset}-${r.offset + data.length} of ${r.totalSize} of ${file} ====\n`;
      return c.body(new Uint8Array(Buffer.concat([Buffer.from(header), data])), 200, {
        'Content-Type': 'text/plain; charset=utf-8',
      });
    } catch (err) {
      return failure(c, err);
    }
  });

  mountLogApi(
    ui,
    follower,
    (_source, c) => workerRef(c.req.param('workerId') ?? ''),
    '/proxy/:workerId',
  );
}
