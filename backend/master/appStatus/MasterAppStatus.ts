/**
 * The master's window on its applications' jobs, stages, tasks and executors: one AppStatusStore
 * per application, fed by its driver's reports (ReportListenerEvents, operations/appStatus.ts),
 * each bounded by the master's wick.ui.retained* settings; the stores of ended applications kept
 * up to wick.deploy.retainedApplications, the oldest forgotten first. It is the AppStatusSource
 * of the master's /api/v1 (backend/http/apiV1.ts): an application it no longer keeps is read from
 * its event log in the master's wick.eventLog.dir when that is set (the last few kept, so that
 * paging through one does not read its log again for every request).
 *
 * A report is applied whole or not at all: checked first against every bound (events a second,
 * jobs, stage attempts and executors at once), so that a refused one leaves the store as it was.
 */

import type { AppStatusSource } from '../../appstatus/AppStatusSource.js';
import { summaryOfStore } from '../../appstatus/AppStatusSource.js';
import { AppStatusStore, type Retention } from '../../appstatus/AppStatusStore.js';
import { progressOf } from '../../appstatus/progress.js';
import { findEventLog, replayEventLog } from '../../appstatus/replayEventLog.js';
import type { ApplicationSummary } from '../../appstatus/sparkApi.js';
import { RpcError, RpcErrorCode } from '../../protocol/errors.js';
import type { WickListenerEvent } from '../../protocol/listener.js';
import type { AppProgress } from '../../protocol/state.js';
import {
  MAX_ACTIVE_JOBS,
  MAX_ACTIVE_STAGES,
  MAX_LIVE_EXECUTORS,
  MAX_REPORTED_EVENTS_PER_SECOND,
  type TaskEndsCoalesced,
} from '../../protocol/statusReport.js';
import { getLogger } from '../../util/log.js';
import type { ApplicationInfo } from '../ApplicationInfo.js';

const log = getLogger('MasterAppStatus');

/** Applications read back from event logs and kept for the next request. */
const REPLAYED_KEPT = 4;

export interface MasterAppStatusOptions {
  retention: Retention;
  /** Stores of ended applications kept (wick.deploy.retainedApplications). */
  retainedApplications: number;
  /** The master's wick.eventLog.dir, if set. */
  eventLogDir: string | undefined;
}

interface Kept {
  store: AppStatusStore;
  /** The application's own entry at the master. */
  app: ApplicationInfo;
  windowStart: number;
  windowEvents: number;
}

export class MasterAppStatus implements AppStatusSource {
  private readonly kept = new Map<string, Kept>();
  private readonly replayed = new Map<string, AppStatusStore>();

  constructor(private readonly options: MasterAppStatusOptions) {}

  /**
   * An application registered: it is listed, with no jobs yet, before its driver's first report
   * (a page or a script that asks for its jobs as soon as it runs gets none, not "unknown app").
   */
  registered(app: ApplicationInfo, now: number): void {
    if (this.kept.has(app.id)) return;
    const store = new AppStatusStore(this.options.retention);
    this.kept.set(app.id, { store, app, windowStart: now, windowEvents: 0 });
    this.forgetEnded();
  }

  /**
   * Applies a report from `app`'s driver (who sent it is checked by the caller) and gives the
   * application's progress after it; throws InvalidParams naming the bound a report passes.
   */
  apply(
    app: ApplicationInfo,
    events: readonly WickListenerEvent[],
    coalesced: readonly TaskEndsCoalesced[],
    now: number,
  ): AppProgress {
    let k = this.kept.get(app.id);
    const size = events.length + coalesced.length;
    if (k && now - k.windowStart < 1000) {
      if (k.windowEvents + size > MAX_REPORTED_EVENTS_PER_SECOND) {
        // Unlike the other bounds, this one passes: the driver sends the same report again.
        throw refused(
          app.id,
          `more than ${MAX_REPORTED_EVENTS_PER_SECOND} events in a second (MAX_REPORTED_EVENTS_PER_SECOND): ${k.windowEvents} taken, ${size} more sent`,
          1000 - (now - k.windowStart),
        );
      }
    }
    const store = k?.store ?? new AppStatusStore(this.options.retention);
    const problem = store.check(events, {
      jobs: MAX_ACTIVE_JOBS,
      stages: MAX_ACTIVE_STAGES,
      executors: MAX_LIVE_EXECUTORS,
    });
    if (problem) throw refused(app.id, problem);
    if (!k) {
      k = { store, app, windowStart: now, windowEvents: 0 };
      this.kept.set(app.id, k);
      this.forgetEnded();
    }
    if (now - k.windowStart >= 1000) {
      k.windowStart = now;
      k.windowEvents = 0;
    }
    k.windowEvents += size;
    for (const e of events) store.post(e);
    for (const c of coalesced) store.postCoalesced(c);
    return progressOf(store);
  }

  applications(): ApplicationSummary[] {
    return [...this.kept.entries()]
      .map(([id, k]) => this.summary(id, k))
      .sort((a, b) => b.startTime - a.startTime);
  }

  async store(appId: string): Promise<AppStatusStore | undefined> {
    const k = this.kept.get(appId);
    if (k) {
      this.summary(appId, k);
      return k.store;
    }
    const dir = this.options.eventLogDir;
    if (!dir) return undefined;
    const cached = this.replayed.get(appId);
    if (cached) return cached;
    const found = await findEventLog(dir, appId);
    if (!found) return undefined;
    const r = await replayEventLog(found.path, this.options.retention);
    for (const p of r.problems)
      log.warn(`Event log ${p.file}${p.line ? `:${p.line}` : ''}: ${p.message}`);
    this.replayed.set(appId, r.store);
    for (const old of this.replayed.keys()) {
      if (this.replayed.size <= REPLAYED_KEPT) break;
      this.replayed.delete(old);
    }
    return r.store;
  }

  /** How many applications' stores are kept (tests). */
  get size(): number {
    return this.kept.size;
  }

  /**
   * The summary of a kept application: its store's, with what the master knows where the store
   * lacks it (its name before ApplicationStart came; its end, when its driver died before saying).
   */
  private summary(appId: string, k: Kept): ApplicationSummary {
    const a = k.store.app;
    a.appName ??= k.app.desc.name;
    a.user ??= k.app.desc.user;
    a.startTime ??= k.app.startTime;
    if (k.app.isFinished && k.app.endTime !== undefined) k.store.endedAt(k.app.endTime);
    return summaryOfStore(appId, k.store, k.app.isFinished);
  }

  /** Forgets the oldest ended applications' stores past retainedApplications. */
  private forgetEnded(): void {
    let over = -this.options.retainedApplications;
    for (const k of this.kept.values()) if (k.app.isFinished) over++;
    for (const [id, k] of this.kept) {
      if (over <= 0) return;
      if (k.app.isFinished) {
        this.kept.delete(id);
        over--;
      }
    }
  }
}

function refused(appId: string, bound: string, retryAfterMs?: number): RpcError {
  const message = `ReportListenerEvents of ${appId} refused: ${bound}; nothing of it was applied`;
  return retryAfterMs === undefined
    ? new RpcError(RpcErrorCode.InvalidParams, message)
    : new RpcError(RpcErrorCode.RateLimited, message, { retryAfterMs });
}
