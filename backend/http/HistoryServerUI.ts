/**
 * `wick history-server`'s web port (Spark's HistoryServer, port 18080): the history API over a
 * HistoryProvider (historyApi.ts), and the dashboard in its 'history' mode at / (the listing of
 * logged applications, each one's jobs, stages, tasks, executors and timeline: the master's
 * pages, one bundle, read from the event log when a page opens, nothing pushed or polled), on the
 * same UiServer as the master's web UI (its CSP, its headers), behind the same login (uiAuth.ts):
 * the cluster secret, found as every process finds it, or made on first start as a master makes
 * it, so that a history server is never open by accident; `wick.authenticate=false` runs it open,
 * as it does a master.
 */
import { AppConf } from '../conf/app.js';
import { HistoryConf } from '../conf/history.js';
import type { WickConf } from '../conf/WickConf.js';
import type { HistoryProvider } from '../history/HistoryProvider.js';
import { ensureClusterSecret, resolveClusterAuth } from '../rpc/clusterSecret.js';
import { getLogger } from '../util/log.js';
import { mountApiV1 } from './apiV1.js';
import { mountHistoryApi } from './historyApi.js';
import { mountHistoryInfo } from './historyInfoApi.js';
import { historyStatusSource } from './historyStatusSource.js';
import { UiServer } from './UiServer.js';

const log = getLogger('HistoryServer');

export class HistoryServerUI {
  private constructor(
    private readonly ui: UiServer,
    readonly url: string,
  ) {}

  get port(): number {
    return this.ui.port;
  }

  get routes(): { method: string; path: string }[] {
    return this.ui.routes;
  }

  static async start(
    provider: HistoryProvider,
    host: string,
    port: number,
    maxRetries: number,
    conf: WickConf,
  ): Promise<HistoryServerUI> {
    const auth = ensureClusterSecret(resolveClusterAuth(conf));
    let url = '';
    const ui = new UiServer(
      () => ({ config: { mode: 'history', host: 'web' }, title: 'Wick History Server' }),
      auth.mode === 'secret'
        ? { secret: auth.secret, loginCommand: () => `wick ui-url --ui ${url}` }
        : undefined,
    );
    // The listing (with Spark's query) first; then each application's pages from its log.
    mountHistoryApi(ui.app, provider);
    const source = historyStatusSource(
      provider,
      {
        jobs: conf.get(AppConf.retainedJobs),
        stages: conf.get(AppConf.retainedStages),
        tasks: conf.get(AppConf.retainedTasks),
        deadExecutors: conf.get(AppConf.retainedDeadExecutors),
      },
      conf.get(HistoryConf.retainedApplications),
    );
    mountApiV1(ui.app, () => source);
    mountHistoryInfo(ui.app, provider);
    // Last: the page at / and its two files, then the 404 and 500 answers.
    await ui.mountDashboard();
    const bound = await ui.listen('HistoryServerUI', host, port, maxRetries);
    url = `http://${host.includes(':') ? `[${host}]` : host}:${bound}`;
    log.info(`Bound HistoryServer to ${host}, and started at ${url}`);
    return new HistoryServerUI(ui, url);
  }

  stop(): Promise<void> {
    return this.ui.stop();
  }
}
