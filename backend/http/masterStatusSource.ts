/**
 * What the master's `/api/v1` reads: the applications the master keeps (live, or ended and still
 * retained: their stores, fed by their drivers' reports), and then, as Spark's history server
 * lists them, every application whose event log is in the dir the master's applications log into
 * (eventlog/eventLogDir.ts masterEventLogDir): those that fell out of its retained list, ran
 * before it restarted, or ran on another master sharing the dir. An application both kept and
 * logged is listed once, as the master keeps it (its live state is newer than its log).
 *
 * The dir is looked at again when the list is asked for, at most once every `rescanMs`, reading
 * only what is new or changed (HistoryProvider.scan); the master never cleans it: that is the
 * history server's (wick.history.fs.cleaner.*).
 */
import type { AppStatusSource } from '../appstatus/AppStatusSource.js';
import type { Retention } from '../appstatus/AppStatusStore.js';
import type { ApplicationSummary } from '../appstatus/sparkApi.js';
import type { HistoryProvider } from '../history/HistoryProvider.js';
import { historyStatusSource } from './historyStatusSource.js';

/** Logged applications' stores kept for the next request (each until its log changes). */
const LOGGED_STORES_KEPT = 4;

export interface LoggedApplications {
  provider: HistoryProvider;
  retention: Retention;
  /** The shortest time between two looks at the dir (ms). */
  rescanMs?: number;
  now?: () => number;
  /** A look at the dir that failed (the listing then shows what was known). */
  warn?: (message: string) => void;
}

export function withLoggedApplications(
  kept: AppStatusSource,
  logged: LoggedApplications,
): AppStatusSource {
  const { provider } = logged;
  const fromLogs = historyStatusSource(provider, logged.retention, LOGGED_STORES_KEPT);
  const now = logged.now ?? Date.now;
  const rescanMs = logged.rescanMs ?? 1_000;
  let lastScan = Number.NEGATIVE_INFINITY;
  const scan = async () => {
    if (now() - lastScan < rescanMs) return;
    try {
      await provider.scan();
    } catch (err) {
      logged.warn?.(
        `Reading the event logs in ${provider.logDir} failed: ${(err as Error).message}`,
      );
    }
    lastScan = now();
  };
  return {
    async applications(): Promise<ApplicationSummary[]> {
      const [own] = await Promise.all([kept.applications(), scan()]);
      const ids = new Set(own.map((a) => a.id));
      const others = (await fromLogs.applications()).filter((a) => !ids.has(a.id));
      return [...own, ...others].sort((a, b) => b.startTime - a.startTime);
    },
    async store(appId) {
      const own = await kept.store(appId);
      if (own) return own;
      if (!provider.application(appId)) await scan();
      return fromLogs.store(appId);
    },
  };
}
