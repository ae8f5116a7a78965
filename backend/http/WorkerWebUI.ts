import { LogFollower } from '../client/LogFollower.js';
import type { WickConf } from '../conf/WickConf.js';
import { readLogSetRange } from '../logs/logSet.js';
import { madeLogs } from '../logs/madeLogs.js';
import { WEB_UI_ENDPOINT } from '../protocol/endpoints.js';
import type { MessageOf } from '../protocol/registry.js';
import { RequestWorkerState, type WorkerStateResponse } from '../protocol/worker.js';
import type { RpcEndpointRef, RpcEnv } from '../rpc/index.js';
import { RpcError, RpcErrorCode } from '../rpc/index.js';
import type { WireSecurity } from '../rpc/tls/WireSecurity.js';
import { logFields } from '../shared/logSource.js';
import { sparkResourcesJson } from '../shared/sparkJson.js';
import { workerUi } from '../shared/uiLogin.js';
import { getLogger } from '../util/log.js';
import { mountLogApi } from './logApi.js';
import { parseLogRequest } from './logParams.js';
import { mountPrometheus } from './metrics/prometheusRoute.js';
import { workerMetricsRegistry } from './metrics/workerMetrics.js';
import { sseResponse } from './sse.js';
import { UiServer } from './UiServer.js';
import { uiClusterSecret } from './uiAuth.js';

const log = getLogger('WorkerWebUI');

type WorkerState = MessageOf<typeof WorkerStateResponse>;

/** What the web UI needs of its Worker endpoint (the web UI does not import the daemon). */
export interface WorkerUiHost {
  readonly workerId: string;
  readonly workDir: string;
  /** The Worker endpoint's ref, to ask it its state. */
  readonly self: RpcEndpointRef;
  /** Calls `fn` after each change of the worker's state; returns a function that stops it. */
  onStateChange(fn: () => void): () => void;
  /**
   * The master it follows, for the login command its 401 answers name; whether it is registered
   * with one now, for the metrics.
   */
  readonly masterConnection: {
    readonly activeMasterUrl: string | undefined;
    readonly registered: boolean;
  };
}

/**
 * A worker's web UI port (Spark's WorkerWebUI, :8081): the dashboard's worker page at /, Spark's
 * /json (the worker's state with Spark's field names) and /log (plain text with Spark's
 * `==== Bytes S-E of TOTAL of FILE ====` header), and the dashboard's API: the worker's state,
 * pushed again on each change, and its logs. Every log is opened by openLogFile, which refuses
 * anything outside the work dir. With authentication on, all of it is behind a login (uiAuth.ts)
 * but /health; the master's session cookie is accepted too (same secret, and a browser sends a
 * host's cookies to each of its ports). Its metrics for Prometheus are at /metrics/prometheus
 * (metrics/workerMetrics.ts), read from the worker's state when scraped.
 */
export class WorkerWebUI {
  private worker: WorkerUiHost | undefined;
  private logs: LogFollower | undefined;
  private env: RpcEnv | undefined;

  private constructor(private readonly ui: UiServer) {}

  get port(): number {
    return this.ui.port;
  }

  /** `https` when it serves TLS. */
  get scheme(): 'http' | 'https' {
    return this.ui.scheme;
  }

  get routes(): { method: string; path: string }[] {
    return this.ui.routes;
  }

  static async start(
    host: string,
    port: number,
    maxRetries: number,
    conf: WickConf,
    /** TLS (https) when it serves: the daemon's RpcEnv's, so one certificate for both ports. */
    security?: WireSecurity,
  ): Promise<WorkerWebUI> {
    let self: WorkerWebUI | undefined;
    const secret = uiClusterSecret(conf);
    const ui = new UiServer(
      () => ({
        config: {
          mode: 'worker',
          host: 'web',
          ...(self?.worker ? { workerId: self.worker.workerId } : {}),
        },
        title: `Wick Worker ${self?.worker?.workerId ?? ''}`.trim(),
      }),
      secret === undefined
        ? undefined
        : {
            secret,
            loginCommand: () => loginCommand(self?.worker),
            audience: () => (self?.worker ? workerUi(self.worker.workerId) : undefined),
          },
    );
    self = new WorkerWebUI(ui);

    ui.app.get('/json', async (c) => {
      const s = await self.state();
      return s ? c.json(sparkWorkerJson(s)) : c.text('The worker is starting\n', 503);
    });
    ui.app.get('/json/', async (c) => {
      const s = await self.state();
      return s ? c.json(sparkWorkerJson(s)) : c.text('The worker is starting\n', 503);
    });
    ui.app.get('/api/worker', async (c) => {
      const s = await self.state();
      return s ? c.json(s) : c.text('The worker is starting\n', 503);
    });

    mountPrometheus(
      ui,
      workerMetricsRegistry({
        state: () => self.state(),
        rpc: () => self.env?.connectionStats(),
        registered: () => self.worker?.masterConnection.registered ?? false,
      }),
      () => (self.worker ? undefined : 'The worker is starting'),
    );

    // Spark's plain-text log endpoint.
    ui.app.get('/log', async (c) => {
      const w = self.worker;
      if (!w) return c.text('The worker is starting\n', 503);
      const req = parseLogRequest((n) => c.req.query(n));
      if (typeof req === 'string') return c.text(`Error: ${req}\n`, 400);
      let r: Awaited<ReturnType<typeof readLogSetRange>>;
      try {
        // Over every file of the log (rolled-over ones, then the active one), as Spark's page.
        r = await readLogSetRange(
          w.workDir,
          logFields(req.source, req.stream),
          req.offset,
          req.length,
          madeLogs,
        );
      } catch (err) {
        const message = (err as Error).message;
        if (!(err instanceof RpcError)) throw err;
        const status = message.startsWith('No such log')
          ? 404
          : err.code === RpcErrorCode.InvalidParams
            ? 400
            : 500;
        return c.text(`Error: ${message}\n`, status);
      }
      const header = `==== Bytes ${r.offset}-${r.offset + r.data.length} of ${r.totalSize} of ${r.path} ====\n`;
      return c.body(new Uint8Array(Buffer.concat([Buffer.from(header), r.data])), 200, {
        'Content-Type': 'text/plain; charset=utf-8',
      });
    });

    ui.app.get('/api/events', (c) => {
      const w = self.worker;
      if (!w) return c.text('The worker is starting\n', 503);
      return sseResponse(c, ui.streams, (channel) => {
        channel.send({ event: 'worker', data: {} });
        // Changes come in bursts (a launch, then RUNNING); one event per turn of the loop.
        let queued: NodeJS.Immediate | undefined;
        const off = w.onStateChange(() => {
          queued ??= setImmediate(() => {
            queued = undefined;
            channel.send({ event: 'worker', data: {} });
          });
        });
        return () => {
          off();
          if (queued) clearImmediate(queued);
        };
      });
    });

    mountLogApi(
      ui,
      () => self.logs,
      () => self.worker?.self ?? 'The worker is starting',
    );
    await ui.mountDashboard();
    const bound = await ui.listen('WorkerUI', host, port, maxRetries, security);
    log.info(`Bound WorkerWebUI to ${host}, and started at ${ui.scheme}://${host}:${bound}`);
    return self;
  }

  /** Joins the worker's RpcEnv once the Worker endpoint is set up. */
  attach(env: RpcEnv, worker: WorkerUiHost): void {
    this.logs = new LogFollower('The web UI stopped');
    env.setupEndpoint(WEB_UI_ENDPOINT, this.logs);
    this.env = env;
    this.worker = worker;
  }

  stop(): Promise<void> {
    return this.ui.stop();
  }

  private async state(): Promise<WorkerState | undefined> {
    const w = this.worker;
    if (!w) return undefined;
    return w.self.ask(RequestWorkerState({}), { timeout: 10_000 });
  }
}

/** What prints a login link for a worker's own port: `wick ui-url`, from the master it follows. */
function loginCommand(w: WorkerUiHost | undefined): string {
  const master = w?.masterConnection.activeMasterUrl ?? '<the master URL>';
  return `wick ui-url --master ${master} --worker ${w?.workerId ?? '<this worker’s id>'}`;
}

/** The worker's state with the field names of Spark's worker /json (JsonProtocol.writeWorkerState). */
export function sparkWorkerJson(s: WorkerState): Record<string, unknown> {
  type Runner = WorkerState['executors'][number];
  const executor = (r: Runner) => ({
    id: r.execId,
    appid: r.appId,
    cores: r.cores,
    memory: r.memory,
    resources: sparkResourcesJson(r.resources),
    ...(r.app ? { appdesc: sparkAppDescJson(r.app) } : {}),
    state: r.state,
    ...(r.exitCode !== undefined ? { exitcode: r.exitCode } : {}),
  });
  const driver = (r: Runner) => ({
    id: r.driverId,
    cores: r.cores,
    memory: r.memory,
    state: r.state,
    ...(r.message !== undefined ? { exception: r.message } : {}),
  });
  return {
    id: s.workerId,
    masterurl: s.masterUrl ?? '',
    masterwebuiurl: s.masterWebUiUrl ?? '',
    cores: s.cores,
    coresused: s.coresUsed,
    memory: s.memory,
    memoryused: s.memoryUsed,
    resources: sparkResourcesJson(s.resources),
    resourcesused: sparkResourcesJson(s.resourcesUsed),
    resourcesfree: sparkResourcesJson(
      Object.fromEntries(
        Object.entries(s.resources ?? {}).map(([n, all]) => [
          n,
          all.filter((a) => !s.resourcesUsed?.[n]?.includes(a)),
        ]),
      ),
    ),
    executors: s.executors.map(executor),
    finishedexecutors: s.finishedExecutors.map(executor),
    drivers: s.drivers.map(driver),
    finisheddrivers: s.finishedDrivers.map(driver),
  };
}

/** An executor's application as Spark's JsonProtocol.writeApplicationDescription writes it. */
function sparkAppDescJson(a: NonNullable<WorkerState['executors'][number]['app']>) {
  const requirements = (a.resourceReqsPerExecutor ?? []).map((r) => ({
    name: r.resourceName,
    amount: r.amount,
  }));
  return {
    name: a.name,
    // 0: no cap, as Spark writes maxCores.getOrElse(0).
    cores: a.maxCores ?? 0,
    memoryperexecutor: a.memoryPerExecutorMB,
    resourcesperexecutor: requirements,
    memoryperslave: a.memoryPerExecutorMB,
    resourcesperslave: requirements,
    user: a.user,
    command: a.command,
  };
}
