import type { Context } from 'hono';
import type { WickConf } from '../conf/WickConf.js';
import { MasterConf } from '../master/config.js';
import { sparkMasterJson } from '../master/sparkJson.js';
import type { MessageOf } from '../protocol/registry.js';
import { type MasterStateResponse, RequestMasterState } from '../protocol/state.js';
import { RequestWorkerState } from '../protocol/worker.js';
import { RpcConf, type RpcEndpointRef, type RpcEnv } from '../rpc/index.js';
import { getLogger } from '../util/log.js';
import type { LogSource } from '../worker/logs/logFiles.js';
import { Worker } from '../worker/Worker.js';
import { mountKillApi } from './killApi.js';
import { failure, mountLogApi } from './logApi.js';
import { sseResponse } from './sse.js';
import { UiServer } from './UiServer.js';
import { sparkClusterUtilizationJson } from './utilization.js';
import { WebUiEndpoint } from './WebUiEndpoint.js';

const log = getLogger('MasterWebUI');

type State = MessageOf<typeof MasterStateResponse>;

/**
 * The master's web UI port (Spark's MasterWebUI): the dashboard at /, Spark's /json and
 * /json/clusterutilization, and the dashboard's API — the state pushed over Server-Sent Events
 * (from the web UI's own subscription to the Master, never by polling), the workers' own states
 * and logs (asked of the right worker over RPC), and kills (see killApi.ts).
 */
export class MasterWebUI {
  private endpoint: WebUiEndpoint | undefined;

  private constructor(
    private readonly ui: UiServer,
    private readonly master: RpcEndpointRef,
  ) {}

  get port(): number {
    return this.ui.port;
  }

  static async start(
    master: RpcEndpointRef,
    host: string,
    port: number,
    maxRetries: number,
    conf?: WickConf,
  ): Promise<MasterWebUI> {
    let self: MasterWebUI | undefined;
    const ui = new UiServer(() => ({
      config: { mode: 'master', host: 'web' },
      title: `Wick Master at ${self?.endpoint?.state?.url ?? master.address}`,
    }));
    self = new MasterWebUI(ui, master);
    const authenticate = conf?.get(RpcConf.authenticate) ?? false;
    const killEnabled = conf?.get(MasterConf.uiKillEnabled) ?? false;
    const capabilities = { killEnabled, killNeedsSecret: authenticate };
    const askState = () => master.ask(RequestMasterState({}), { timeout: 10_000 });

    const json = async (c: Context) => {
      try {
        return c.json(sparkMasterJson(await askState()));
      } catch (err) {
        return c.text(`Master did not answer: ${(err as Error).message}\n`, 503);
      }
    };
    ui.app.get('/json', json);
    ui.app.get('/json/', json);
    ui.app.get('/json/clusterutilization', async (c) => {
      try {
        return c.json(sparkClusterUtilizationJson(await askState()));
      } catch (err) {
        return c.text(`Master did not answer: ${(err as Error).message}\n`, 503);
      }
    });

    ui.app.get('/api/events', (c) => {
      const ep = self.endpoint;
      if (!ep) return c.text('The web UI is starting\n', 503);
      return sseResponse(c, ui.streams, (channel) =>
        ep.feed({
          snapshot: (state, history) =>
            channel.send({
              event: 'snapshot',
              data: { state, utilization: history.samples, capabilities },
            }),
          change: (event) => channel.send({ event: 'change', data: event }),
        }),
      );
    });

    ui.app.get('/api/worker/:id', async (c) => {
      const ref = self.workerRef(c.req.param('id'));
      if (typeof ref === 'string') return c.text(`${ref}\n`, 404);
      try {
        const s = await ref.ask(RequestWorkerState({}), { timeout: 10_000 });
        return c.json(s);
      } catch (err) {
        return failure(c, err);
      }
    });

    mountLogApi(
      ui,
      () => self.endpoint,
      (source) => self.locateLog(source),
    );
    mountKillApi(
      ui,
      {
        enabled: killEnabled,
        secret: authenticate
          ? conf?.get(RpcConf.authenticateSecret) || process.env.WICK_AUTH_SECRET || ''
          : undefined,
      },
      () => master,
    );
    await ui.mountDashboard();
    const bound = await ui.listen('MasterUI', host, port, maxRetries);
    log.info(`Bound MasterWebUI to ${host}, and started at http://${host}:${bound}`);
    return self;
  }

  /**
   * Joins the master's RpcEnv once the Master endpoint is set up: the web UI's endpoint subscribes
   * to the Master's state and receives the log chunks of the follows pages open.
   */
  attach(env: RpcEnv): void {
    const ep = new WebUiEndpoint();
    env.setupEndpoint(WebUiEndpoint.ENDPOINT_NAME, ep);
    this.endpoint = ep;
    ep.subscribe(this.master).catch((err: Error) =>
      log.warn(`The web UI could not subscribe to the master's state: ${err.message}`),
    );
  }

  stop(): Promise<void> {
    return this.ui.stop();
  }

  private get state(): State | undefined {
    return this.endpoint?.state;
  }

  private workerRef(workerId: string): RpcEndpointRef | string {
    const state = this.state;
    if (!state || !this.endpoint) return 'The web UI is starting';
    const w = state.workers.find((x) => x.id === workerId);
    if (!w) return `No worker ${workerId} is known to this master`;
    if (w.state === 'DEAD') return `Worker ${workerId} is DEAD`;
    return this.endpoint.rpcEnv.endpointRef({
      address: `${w.host}:${w.port}`,
      name: Worker.ENDPOINT_NAME,
    });
  }

  /** The worker that ran an executor or a driver, from the master's state. */
  private locateLog(source: LogSource): RpcEndpointRef | string {
    const state = this.state;
    if (!state) return 'The web UI is starting';
    let workerId: string | undefined;
    if (source.driverId !== undefined) {
      const d = [...state.activeDrivers, ...state.completedDrivers].find(
        (x) => x.id === source.driverId,
      );
      if (!d) return `No driver ${source.driverId} is known to this master`;
      workerId = d.workerId;
      if (!workerId) return `Driver ${source.driverId} has not been launched on a worker`;
    } else {
      const app = [...state.activeApps, ...state.completedApps].find((a) => a.id === source.appId);
      if (!app) return `No application ${source.appId} is known to this master`;
      const e = [...app.executors, ...app.removedExecutors].find((x) => x.id === source.execId);
      if (!e) return `No executor ${source.execId} of ${source.appId} is known to this master`;
      workerId = e.workerId;
    }
    return this.workerRef(workerId);
  }
}
