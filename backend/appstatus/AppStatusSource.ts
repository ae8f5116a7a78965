/**
 * Where `/api/v1` (backend/http/apiV1.ts) finds applications: the one interface between those
 * routes and whoever holds the stores. The master implements it over the stores its drivers'
 * reports build, and over the event logs in its wick.eventLog.dir for applications it no longer
 * keeps (master/appStatus/MasterAppStatus.ts); a history server implements it over its event log
 * dir alone (EventLogStatusSource below is one to build on). Either may answer at once or after
 * reading a log, hence the promises.
 */
import type { AppStatusStore } from './AppStatusStore.js';
import type { ApplicationSummary } from './sparkApi.js';

export type MaybePromise<T> = T | Promise<T>;

export interface AppStatusSource {
  /** The applications it can open, the most recent first. */
  applications(): MaybePromise<ApplicationSummary[]>;
  /**
   * One application's store, or undefined for an id it does not know (the routes answer 404
   * naming it). The caller reads it and never changes it; `store.app` says what `/applications/
   * {app}` shows of it (its end time set once it ended).
   */
  store(appId: string): MaybePromise<AppStatusStore | undefined>;
}

/** An application's summary as its store tells it. */
export function summaryOfStore(
  appId: string,
  store: AppStatusStore,
  completed: boolean,
): ApplicationSummary {
  const a = store.app;
  const startTime = a.startTime ?? 0;
  return {
    id: appId,
    name: a.appName ?? appId,
    user: a.user ?? '',
    startTime,
    ...(a.endTime !== undefined ? { endTime: a.endTime } : {}),
    lastUpdated: Math.max(store.lastUpdated, startTime),
    completed: completed || a.endTime !== undefined,
  };
}
