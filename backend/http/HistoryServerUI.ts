/**
 * `wick history-server`'s web port (Spark's HistoryServer, port 18080): the history API over a
 * HistoryProvider (historyApi.ts), on the same UiServer as the master's web UI, behind the same
 * login (uiAuth.ts): the cluster secret, found as every process finds it, or made on first start
 * as a master makes it, so that a history server is never open by accident;
 * `wick.authenticate=false` runs it open, as it does a master.
 */
import { AppConf } from '../conf/app.js';
import { HistoryConf } from '../conf/history.js';
import type { WickConf } from '../conf/WickConf.js';
import type { HistoryProvider } from '../history/HistoryProvider.js';
import { ensureClusterSecret, resolveClusterAuth } from '../rpc/clusterSecret.js';
import { getLogger } from '../util/log.js';
import { mountApiV1 } from './apiV1.js';
import { mountHistoryApi } from './historyApi.js';
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
      // The dashboard is not mounted here (yet): this page config is never served.
      () => ({ config: { mode: 'master', host: 'web' }, title: 'Wick History Server' }),
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
    ui.app.get('/', (c) =>
      c.text(
        `Wick history server over ${provider.logDir}: ${provider.applications().length} application(s).\nThe list: /api/v1/applications (Spark's shape); \`wick history\` prints it in a terminal.\n`,
      ),
    );
    ui.app.notFound((c) => c.text('Not found.\n', 404));
    ui.app.onError((err, c) => c.text(`Internal error: ${err.message}\n`, 500));
    const bound = await ui.listen('HistoryServerUI', host, port, maxRetries);
    url = `http://${host.includes(':') ? `[${host}]` : host}:${bound}`;
    log.info(`Bound HistoryServer to ${host}, and started at ${url}`);
    return new HistoryServerUI(ui, url);
  }

  stop(): Promise<void> {
    return this.ui.stop();
  }
}
