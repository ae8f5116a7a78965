import type { HttpBindings } from '@hono/node-server';
import { Value } from '@sinclair/typebox/value';
import type { Context } from 'hono';
import { MAX_ID_LENGTH } from '../../protocol/bounds.js';
import { RequestDriverStatus, RequestKillDriver } from '../../protocol/client.js';
import { DriverId } from '../../protocol/common.js';
import type { RpcEndpointRef } from '../../rpc/index.js';
import type { WireSecurity } from '../../rpc/tls/WireSecurity.js';
import { getLogger } from '../../util/log.js';
import { readBoundedBody } from '../boundedBody.js';
import { checkScriptCredential } from '../scriptCredential.js';
import { UiServer } from '../UiServer.js';
import {
  type CreateSubmission,
  createSubmissionResponse,
  errorResponse,
  killSubmissionResponse,
  MAX_REQUEST_BYTES,
  PROTOCOL_VERSION,
  parseCreateSubmission,
  SC_UNKNOWN_PROTOCOL_VERSION,
  SubmitRestProtocolError,
  submissionStatusResponse,
} from './submitRestProtocol.js';

const log = getLogger('RestSubmissionServer');

/** What the master answers a submission: Spark's SubmitDriverResponse. */
export interface CreatedDriver {
  success: boolean;
  driverId?: string;
  message: string;
}

export interface RestSubmissionServerOptions {
  /** The Master endpoint (in this process), asked for kills and statuses. */
  master: RpcEndpointRef;
  /**
   * Leaves the application with the master and asks it for the driver: given by the CLI, which
   * may compile applications (backend/submit), as the web UI is given its master.
   */
  createDriver: (request: CreateSubmission) => Promise<CreatedDriver>;
  /** The cluster secret every request must carry. */
  secret: string;
  host: string;
  port: number;
  maxRetries: number;
  /** The master's TLS: off loopback the server speaks https with the cluster's certificate. */
  security?: WireSecurity;
  askTimeoutMs?: number;
}

const BASE = `/${PROTOCOL_VERSION}/submissions`;

/** Each request's body, read within its bound before any route sees it. */
const bodies = new WeakMap<Context, string>();

/**
 * Spark's REST submission server (deploy/rest/StandaloneRestServer), in the master's process:
 * POST /v1/submissions/create, POST /v1/submissions/kill/<id>, GET /v1/submissions/status/<id>,
 * answering Spark's JSON responses, and an ErrorResponse (400, or Spark's 468 for an unknown
 * protocol version) for anything else. Unlike Spark's, which answers anyone who reaches its port
 * (CVE-2018-11770), every request, an unknown path included, is refused with 401 unless it
 * carries the cluster's credential (scriptCredential.ts: the one check every script door asks); a
 * body is read only after that, and only up to MAX_REQUEST_BYTES. No cookie is read, so a
 * browser's session cannot be used from another site (a cross-site form cannot set the header).
 */
export class RestSubmissionServer {
  private constructor(private readonly ui: UiServer) {}

  get port(): number {
    return this.ui.port;
  }

  get scheme(): 'http' | 'https' {
    return this.ui.scheme;
  }

  static async start(o: RestSubmissionServerOptions): Promise<RestSubmissionServer> {
    // The UI server's http server, TLS front and security headers; no dashboard, no login page,
    // no /health: nothing here answers without the credential.
    const ui = new UiServer(
      () => ({ config: { mode: 'master', host: 'web' }, title: '' }),
      undefined,
      false,
    );
    const app = ui.app;
    const askTimeout = o.askTimeoutMs ?? 30_000;

    app.use(async (c, next) => {
      const credential = checkScriptCredential(c.req.header('authorization'), o.secret);
      if (!credential.ok) {
        c.header('WWW-Authenticate', 'Bearer realm="wick"');
        return c.json(
          errorResponse(
            `${credential.why}. Wick's REST submission server answers only the cluster's credential.`,
          ),
          401,
        );
      }
      await next();
    });
    app.use(async (c, next) => {
      if (c.req.method === 'GET' || c.req.method === 'HEAD') return next();
      const read = await readBoundedBody((c.env as HttpBindings).incoming, MAX_REQUEST_BYTES);
      if (!read.ok) {
        c.header('Connection', 'close');
        return c.json(
          errorResponse(`Request body is larger than the ${MAX_REQUEST_BYTES} bytes allowed.`),
          413,
        );
      }
      bodies.set(c, read.body.toString('utf8'));
      await next();
    });

    app.post(`${BASE}/create`, (c) => create(c, o));
    app.post(`${BASE}/create/`, (c) => create(c, o));
    app.post(`${BASE}/kill/:id{.*}`, async (c) => {
      const id = submissionIdOf(c.req.param('id'));
      if (id === undefined)
        return c.json(errorResponse('Submission ID is missing in kill request.'), 400);
      const bad = badId(id);
      if (bad) return c.json(errorResponse(bad), 400);
      try {
        const r = await o.master.ask(RequestKillDriver({ driverId: id }), { timeout: askTimeout });
        log.info(`REST kill of ${id}: ${r.message}`);
        return c.json(
          killSubmissionResponse({ submissionId: id, success: r.success, message: r.message }),
        );
      } catch (err) {
        return masterDidNotAnswer(c, err);
      }
    });
    app.get(`${BASE}/status/:id{.*}`, async (c) => {
      const id = submissionIdOf(c.req.param('id'));
      if (id === undefined)
        return c.json(errorResponse('Submission ID is missing in status request.'), 400);
      const bad = badId(id);
      if (bad) return c.json(errorResponse(bad), 400);
      try {
        const r = await o.master.ask(RequestDriverStatus({ driverId: id }), {
          timeout: askTimeout,
        });
        return c.json(
          submissionStatusResponse({
            submissionId: id,
            success: r.found,
            driverState: r.state,
            workerId: r.workerId,
            workerHostPort: r.workerHostPort,
            message:
              r.exception !== undefined
                ? `Exception from the cluster:\n${r.exception}`
                : r.found
                  ? undefined
                  : `Driver ${id} is not known to this master (never submitted, or no longer retained)`,
          }),
        );
      } catch (err) {
        return masterDidNotAnswer(c, err);
      }
    });
    // Spark's ErrorServlet: anything else, by what is wrong with its path.
    app.all('*', (c) => errorServlet(c));
    app.onError((err, c) => {
      log.warn('REST submission server: a request failed', err);
      return c.json(errorResponse(`Internal server error: ${err.message}`), 500);
    });

    await ui.listen('REST submission server', o.host, o.port, o.maxRetries, o.security);
    log.info(
      `Started REST server for submitting applications on port ${ui.port} (${ui.scheme}://${o.host}:${ui.port}${BASE}/…, behind the cluster credential)`,
    );
    return new RestSubmissionServer(ui);
  }

  stop(): Promise<void> {
    return this.ui.stop();
  }
}

/**
 * Submissions being compiled and uploaded at once: each compiles an application in the master's
 * process, so a burst waits its turn by being refused (503) rather than queuing without bound.
 */
export const MAX_CONCURRENT_CREATES = 4;
let creating = 0;

async function create(c: Context, o: RestSubmissionServerOptions) {
  let request: CreateSubmission;
  try {
    request = parseCreateSubmission(bodies.get(c) ?? '');
  } catch (err) {
    if (err instanceof SubmitRestProtocolError) return c.json(errorResponse(err.message), 400);
    throw err;
  }
  if (creating >= MAX_CONCURRENT_CREATES) {
    c.header('Retry-After', '5');
    return c.json(
      errorResponse(
        `The master is compiling ${creating} submissions already, the most at once: submit again shortly.`,
      ),
      503,
    );
  }
  let created: CreatedDriver;
  creating++;
  try {
    created = await o.createDriver(request);
  } catch (err) {
    // Bundling or uploading failed: the application's fault (a syntax error, a missing file) as
    // often as the master's, and the message says which.
    return c.json(
      createSubmissionResponse({
        success: false,
        message: `Could not submit ${request.appResource}: ${(err as Error).message}`,
        unknownFields: request.unknownFields,
      }),
    );
  } finally {
    creating--;
  }
  const notes = [
    created.message,
    request.unknownProperties.length > 0
      ? `Ignored unknown properties: ${request.unknownProperties.join(', ')}`
      : '',
    request.mainClass !== undefined
      ? `mainClass ${request.mainClass} is not used: a Wick application starts at its appResource module`
      : '',
  ].filter((s) => s !== '');
  log.info(
    `REST submission of ${request.appResource}: ${created.success ? `driver ${created.driverId}` : `refused: ${created.message}`}`,
  );
  return c.json(
    createSubmissionResponse({
      success: created.success,
      message: notes.join('. '),
      submissionId: created.driverId,
      unknownFields: request.unknownFields,
    }),
  );
}

/** Spark's parseSubmissionId: the first segment after the action; none when empty. */
function submissionIdOf(rest: string | undefined): string | undefined {
  const first = (rest ?? '').replace(/^\/+/, '').split('/')[0];
  return first === undefined || first === '' ? undefined : first;
}

function badId(id: string): string | undefined {
  const shown = JSON.stringify(id.slice(0, 200));
  if (Value.Check(DriverId, id)) return undefined;
  return `Submission ID ${shown} is not a driver id (driver-yyyyMMddHHmmss-NNNN, at most ${MAX_ID_LENGTH} characters).`;
}

function masterDidNotAnswer(c: Context, err: unknown) {
  return c.json(errorResponse(`The master did not answer: ${(err as Error).message}`), 500);
}

function errorServlet(c: Context) {
  const path = new URL(c.req.url).pathname;
  const parts = path.split('/').filter((p) => p !== '');
  let message: string;
  let status: 400 | 405 | typeof SC_UNKNOWN_PROTOCOL_VERSION = 400;
  let highest: string | undefined;
  if (parts.length === 0) message = 'Missing protocol version.';
  else if (parts[0] === PROTOCOL_VERSION && parts.length === 1)
    message = 'Missing the /submissions prefix.';
  else if (parts[0] === PROTOCOL_VERSION && parts[1] === 'submissions') {
    const action = parts[2];
    if (action === 'create' || action === 'kill') {
      message = `/${action} takes POST, not ${c.req.method}.`;
      status = 405;
    } else if (action === 'status') {
      message = `/status takes GET, not ${c.req.method}.`;
      status = 405;
    } else message = 'Missing an action: please specify one of /create, /kill, or /status.';
  } else if (parts[0] === PROTOCOL_VERSION) {
    message = `Unknown path ${JSON.stringify(path.slice(0, 200))}.`;
  } else {
    message = `Unknown protocol version '${String(parts[0] ?? '').slice(0, 100)}'.`;
    status = SC_UNKNOWN_PROTOCOL_VERSION;
    highest = PROTOCOL_VERSION;
  }
  if (status === 405) c.header('Allow', message.includes('GET') ? 'GET' : 'POST');
  return c.json(
    errorResponse(
      `${message} Please submit requests through http://[host]:[port]/${PROTOCOL_VERSION}/submissions/...`,
      highest,
    ),
    status as 400,
  );
}
