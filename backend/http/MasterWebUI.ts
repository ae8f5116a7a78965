import type { Context } from 'hono';
import type { AppStatusSource } from '../appstatus/AppStatusSource.js';
import { LogFollower } from '../client/LogFollower.js';
import { MasterStateMirror } from '../client/MasterStateMirror.js';
import { masterState } from '../client/masterConnection.js';
import { findLogWorker, findWorker, LookupFailed, workerEndpoint } from '../client/workerLookup.js';
import { AppConf } from '../conf/app.js';
import { MasterConf } from '../conf/master.js';
import type { WickConf } from '../conf/WickConf.js';
import { HistoryProvider } from '../history/HistoryProvider.js';
import { WEB_UI_ENDPOINT, WEB_UI_STATE_ENDPOINT } from '../protocol/endpoints.js';
import { RequestWorkerState } from '../protocol/worker.js';
import type { RpcEndpointRef, RpcEnv } from '../rpc/index.js';
import type { WireSecurity } from '../rpc/tls/WireSecurity.js';
import type { LogSource } from '../shared/logSource.js';
import { sparkMasterJson } from '../shared/sparkJson.js';
import { sparkClusterUtilizationJson } from '../shared/utilization.js';
import { getLogger } from '../util/log.js';
import { apiV1Answerer, mountApiV1 } from './apiV1.js';
import { mountKillApi } from './killApi.js';
import { failure, mountLogApi } from './logApi.js';
import { MasterStateFeed } from './MasterStateFeed.js';
import { type LoggedApplications, withLoggedApplications } from './masterStatusSource.js';
import { type AppMetricsSource, appMetricsFromMasterState } from './metrics/appMetrics.js';
import { masterMetricsRegistry } from './metrics/masterMetrics.js';
import { mountPrometheus } from './metrics/prometheusRoute.js';
import { mountSparkUiUrls } from './sparkUiUrls.js';
import { sseResponse } from './sse.js';
import { UiServer } from './UiServer.js';
import { uiClusterSecret } from './uiAuth.js';
import { mountWorkerDecommission } from './workerDecommission.js';
import { mountWorkerProxy } from './workerProxy.js';

const log = getLogger('MasterWebUI');

/**
 * The master's web UI port (Spark's MasterWebUI): the dashboard at /, Spark's /json and
 * /json/clusterutilization, and the dashboard's API — the state pushed over Server-Sent Events
 * (from the web UI's own subscription to the Master, never by polling), the workers' own states
 * and logs (asked of the right worker over RPC), each worker's pages under /proxy/<workerId>/
 * (workerProxy.ts: a browser that reaches only the master sees every log), kills (killApi.ts),
 * its metrics for Prometheus at /metrics/prometheus (metrics/, read from the same mirror), and
 * Spark's REST API over the applications' jobs, stages and tasks (apiV1.ts).
 * With authentication on, all of it is behind a login (uiAuth.ts) but /health.
 */
export class MasterWebUI {
  private stateFeed: MasterStateFeed | undefined;
  private logs: LogFollower | undefined;
  private env: RpcEnv | undefined;
  /** Where the per-application metrics come from: what the master's state shows, until replaced. */
  private appMetrics: AppMetricsSource = appMetricsFromMasterState(() => this.stateFeed?.state);
  private appStatus: AppStatusSource | undefined;

  private constructor(
    private readonly ui: UiServer,
    private readonly master: RpcEndpointRef,
    /** The event logs /api/v1 lists beside the applications the master keeps, if it has a dir. */
    private readonly logged?: LoggedApplications,
  ) {}

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
    master: RpcEndpointRef,
    host: string,
    port: number,
    maxRetries: number,
    conf: WickConf,
    /** TLS (https) when it serves: the daemon's RpcEnv's, so one certificate for both ports. */
    security?: WireSecurity,
    /**
     * The dir the master's applications log into, when it knows it (eventlog/eventLogDir.ts
     * masterEventLogDir): /api/v1 lists their logs beside the applications the master keeps.
     */
    eventLogDir?: string,
  ): Promise<MasterWebUI> {
    let self: MasterWebUI | undefined;
    const secret = uiClusterSecret(conf);
    const ui = new UiServer(
      () => ({
        config: { mode: 'master', host: 'web' },
        title: `Wick Master at ${self?.stateFeed?.state?.url ?? master.address}`,
      }),
      secret === undefined
        ? undefined
        : { secret, loginCommand: () => `wick ui-url --master wick://${master.address}` },
    );
    self = new MasterWebUI(
      ui,
      master,
      eventLogDir ? loggedApplications(conf, eventLogDir) : undefined,
    );
    const killEnabled = conf.get(MasterConf.uiKillEnabled);
    const capabilities = { killEnabled };
    // Page by page, as every client reads it: the same answer however big the cluster.
    const askState = () => masterState(master, 10_000);

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

    mountPrometheus(
      ui,
      masterMetricsRegistry({
        state: () => self.stateFeed?.state,
        rpc: () => self.env?.connectionStats(),
        apps: () => self.appMetrics,
      }),
      () => (self.stateFeed?.state ? undefined : 'The web UI is starting'),
    );

    ui.app.get('/api/events', (c) => {
      const feed = self.stateFeed;
      if (!feed) return c.text('The web UI is starting\n', 503);
      return sseResponse(c, ui.streams, (channel) =>
        feed.feed({
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
      () => self.logs,
      (source) => self.locateLog(source),
    );
    mountWorkerProxy(
      ui,
      () => self.logs,
      (workerId) => self.workerRef(workerId),
    );
    mountKillApi(ui, { enabled: killEnabled }, () => master);
    mountSparkUiUrls(ui, { enabled: killEnabled }, () => master);
    mountWorkerDecommission(ui, { enabled: killEnabled }, () => master);
    mountApiV1(ui.app, () => self.appStatus);
    await ui.mountDashboard();
    const bound = await ui.listen('MasterUI', host, port, maxRetries, security);
    log.info(`Bound MasterWebUI to ${host}, and started at ${ui.scheme}://${host}:${bound}`);
    return self;
  }

  /**
   * Joins the master's RpcEnv once the Master endpoint is set up: a mirror of the Master's state
   * for the pages, and the follower of the log follows they open; `appStatus`, the Master's
   * stores of its applications' jobs, stages and tasks, is what /api/v1 reads.
   */
  /** /api/v1 at `path` over the same stores, for the master's RPC (RequestAppStatusApi). */
  readonly apiV1 = apiV1Answerer(() => this.appStatus);

  attach(env: RpcEnv, appStatus?: AppStatusSource): void {
    this.env = env;
    this.appStatus =
      appStatus && this.logged ? withLoggedApplications(appStatus, this.logged) : appStatus;
    const mirror = new MasterStateMirror();
    env.setupEndpoint(WEB_UI_STATE_ENDPOINT, mirror);
    this.stateFeed = new MasterStateFeed(mirror);
    this.logs = new LogFollower('The web UI stopped');
    env.setupEndpoint(WEB_UI_ENDPOINT, this.logs);
    mirror
      .subscribe(this.master)
      .catch((err: Error) =>
        log.warn(`The web UI could not subscribe to the master's state: ${err.message}`),
      );
  }

  /**
   * Replaces where /metrics/prometheus reads its per-application metrics: the master's status
   * store of what each driver reports (jobs, stages, tasks) plugs in here.
   */
  useAppMetrics(source: AppMetricsSource): void {
    this.appMetrics = source;
  }

  stop(): Promise<void> {
    return this.ui.stop();
  }

  private workerRef(workerId: string): RpcEndpointRef | string {
    return this.lookUp((state, env) => workerEndpoint(env, findWorker(state, workerId)));
  }

  /** The worker that ran an executor or a driver, from the master's state. */
  private locateLog(source: LogSource): RpcEndpointRef | string {
    return this.lookUp((state, env) => workerEndpoint(env, findLogWorker(state, source)));
  }

  /** A lookup in the mirrored state; its LookupFailed (or the UI's starting) as the sentence. */
  private lookUp(
    find: (state: NonNullable<MasterStateFeed['state']>, env: RpcEnv) => RpcEndpointRef,
  ): RpcEndpointRef | string {
    const state = this.stateFeed?.state;
    const env = this.logs?.rpcEnv;
    if (!state || !env) return 'The web UI is starting';
    try {
      return find(state, env);
    } catch (err) {
      if (err instanceof LookupFailed) return err.message;
      throw err;
    }
  }
}

/** The event logs of the dir the master's applications log into. */
function loggedApplications(conf: WickConf, logDir: string): LoggedApplications {
  const warn = (m: string) => log.warn(m);
  return {
    // Never started: the master only scans when asked, and never cleans (the history server's).
    provider: HistoryProvider.fromConf(conf, { logDir, warn }),
    retention: {
      jobs: conf.get(AppConf.retainedJobs),
      stages: conf.get(AppConf.retainedStages),
      tasks: conf.get(AppConf.retainedTasks),
      deadExecutors: conf.get(AppConf.retainedDeadExecutors),
    },
    warn,
  };
}
