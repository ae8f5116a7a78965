/**
 * The history server's AppStatusSource: the applications of its HistoryProvider, each one's
 * store rebuilt by replaying its event log (the provider's `forEachEvent`), so that the same
 * `/api/v1` routes as the master's (apiV1.ts) open a finished application's jobs, stages, tasks,
 * executors and environment. The last few stores are kept, each until its log changes.
 */
import type { AppStatusSource } from '../appstatus/AppStatusSource.js';
import { AppStatusStore, type Retention } from '../appstatus/AppStatusStore.js';
import type { ApplicationSummary } from '../appstatus/sparkApi.js';
import type { HistoryProvider } from '../history/HistoryProvider.js';

interface Kept {
  store: AppStatusStore;
  /** The log as it was when replayed: a changed log is replayed again. */
  size: number;
  lastUpdated: number;
}

export function historyStatusSource(
  provider: HistoryProvider,
  retention: Retention,
  keep: number,
): AppStatusSource {
  const kept = new Map<string, Kept>();
  /** Replays under way, by application and log version (size, modification time). */
  const replaying = new Map<string, Promise<AppStatusStore | undefined>>();
  return {
    applications: (): ApplicationSummary[] =>
      provider.applications().map((a) => ({
        id: a.appId,
        name: a.name,
        user: a.user,
        startTime: a.startTime,
        ...(a.endTime !== undefined ? { endTime: a.endTime } : {}),
        lastUpdated: a.lastUpdated,
        completed: a.completed,
      })),
    store(appId: string): Promise<AppStatusStore | undefined> {
      const listing = provider.application(appId);
      if (!listing) return Promise.resolve(undefined);
      const k = kept.get(appId);
      if (k && k.size === listing.fileSize && k.lastUpdated === listing.lastUpdated) {
        kept.delete(appId);
        kept.set(appId, k);
        return Promise.resolve(k.store);
      }
      // A page asks its jobs, stages and executors at once: one replay answers all three.
      const key = `${appId}\n${listing.fileSize}\n${listing.lastUpdated}`;
      const running = replaying.get(key);
      if (running) return running;
      const replay = (async () => {
        const store = new AppStatusStore(retention);
        const replayed = await provider.forEachEvent(appId, (e) => store.post(e));
        if (!replayed) return undefined;
        kept.delete(appId);
        kept.set(appId, { store, size: listing.fileSize, lastUpdated: listing.lastUpdated });
        while (kept.size > Math.max(1, keep)) kept.delete(kept.keys().next().value as string);
        return store;
      })().finally(() => replaying.delete(key));
      replaying.set(key, replay);
      return replay;
    },
  };
}
