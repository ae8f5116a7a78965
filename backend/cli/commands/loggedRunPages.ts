/**
 * The agent's past runs' pages (backend/agent/pastRunPages.ts): the history server's own, over
 * the agent's provider: the same /api/v1 routes over the same replay of a log
 * (historyStatusSource), and the same account of a log (historyAppInfo). Wired here, where the
 * CLI composes the agent, since the agent does not import the web UIs.
 */
import type { LoggedPagesFactory } from '../../agent/pastRunPages.js';
import { AppConf } from '../../conf/app.js';
import type { WickConf } from '../../conf/WickConf.js';
import { apiV1Answerer } from '../../http/apiV1.js';
import { historyAppInfo } from '../../http/historyInfoApi.js';
import { historyStatusSource } from '../../http/historyStatusSource.js';

/** Replayed stores kept: a panel shows one past run at a time (its job and stage pages). */
const STORES_KEPT = 2;

export function loggedRunPages(conf: WickConf): LoggedPagesFactory {
  return (provider) => {
    const source = historyStatusSource(
      provider,
      {
        jobs: conf.get(AppConf.retainedJobs),
        stages: conf.get(AppConf.retainedStages),
        tasks: conf.get(AppConf.retainedTasks),
        deadExecutors: conf.get(AppConf.retainedDeadExecutors),
      },
      STORES_KEPT,
    );
    return {
      api: apiV1Answerer(() => source),
      logInfo: (appId) => historyAppInfo(provider, appId),
    };
  };
}
