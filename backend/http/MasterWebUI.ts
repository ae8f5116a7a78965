import http from 'node:http';
import { sparkMasterJson } from '../master/sparkJson.js';
import { MasterStateResponse, RequestMasterState } from '../protocol/state.js';
import type { RpcEndpointRef } from '../rpc/index.js';
import { bindWithRetries } from '../util/bind.js';
import { getLogger } from '../util/log.js';

const log = getLogger('MasterWebUI');

/**
 * The master's web UI port. For now it serves Spark's `/json`; the dashboard comes with its own
 * issue and is served from here.
 */
export class MasterWebUI {
  private constructor(
    private readonly server: http.Server,
    readonly port: number,
  ) {}

  static async start(
    master: RpcEndpointRef,
    host: string,
    port: number,
    maxRetries: number,
  ): Promise<MasterWebUI> {
    const server = http.createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      if (req.method === 'GET' && (url.pathname === '/json' || url.pathname === '/json/')) {
        master.ask(RequestMasterState({}), MasterStateResponse, { timeout: 10_000 }).then(
          (state) => send(res, 200, 'application/json', JSON.stringify(sparkMasterJson(state))),
          (err: Error) => send(res, 503, 'text/plain', `Master did not answer: ${err.message}\n`),
        );
        return;
      }
      send(
        res,
        404,
        'text/plain',
        'Not found. The master answers GET /json; the dashboard is not built yet.\n',
      );
    });
    server.on('clientError', (_err, socket) => socket.destroy());
    const bound = await bindWithRetries(server, 'MasterUI', host, port, maxRetries);
    log.info(`Bound MasterWebUI to ${host}, and started at http://${host}:${bound}`);
    return new MasterWebUI(server, bound);
  }

  stop(): Promise<void> {
    return new Promise((r) => {
      this.server.closeAllConnections();
      this.server.close(() => r());
    });
  }
}

function send(res: http.ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { 'content-type': `${type}; charset=utf-8`, 'cache-control': 'no-store' });
  res.end(body);
}
