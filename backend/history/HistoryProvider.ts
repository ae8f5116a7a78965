/**
 * The applications of an event log folder (Spark's FsHistoryProvider): a listing kept up to date
 * by scans that read only the logs that are new or changed (by size and modification time), each
 * by its first and last events only (readListing.ts); an application loaded on demand by
 * replaying its log's events, one at a time (`forEachEvent`: what a status store is fed with),
 * and the last few loaded kept (wick.history.retainedApplications); and the cleaner
 * (wick.history.fs.cleaner.*). A log that cannot be read is named in one warning, with why, and
 * left out until it changes.
 */
import { rm } from 'node:fs/promises';
import { AppConf } from '../conf/app.js';
import { HistoryConf } from '../conf/history.js';
import type { WickConf } from '../conf/WickConf.js';
import { historyLogDir } from '../eventlog/eventLogDir.js';
import { type EventLogProblem, readEventLog } from '../eventlog/readEventLog.js';
import type { WickListenerEvent } from '../protocol/listener.js';
import { type Clock, systemClock, type TimerHandle } from '../util/clock.js';
import { type AppHistorySummary, AppSummaryBuilder } from './AppHistorySummary.js';
import { logsToClean } from './cleaner.js';
import { LruCache } from './LruCache.js';
import { isListenerEvent, whyNotAnEvent } from './listenerEvents.js';
import { type LogFile, listLogFiles } from './logFiles.js';
import { type ApplicationListing, readListing } from './readListing.js';

export type { ApplicationListing } from './readListing.js';

export interface HistoryProviderOptions {
  logDir: string;
  /** Read at most this much of an uncompressed log's end to list it (0: read it through). */
  endChunkBytes?: number;
  retainedApplications?: number;
  /** Bounds of a loaded application's jobs and stages. */
  maxJobs?: number;
  maxStages?: number;
  updateIntervalMs?: number;
  cleaner?: { intervalMs: number; maxAgeMs: number; maxNum: number };
  clock?: Clock;
  /** One line per unreadable log (and per cleaner failure). */
  warn?: (message: string) => void;
}

/** What replaying a log did: events given, events skipped (not an event), problems met. */
export interface ReplayResult {
  events: number;
  skipped: number;
  problems: EventLogProblem[];
}

export interface LoadedApplication {
  listing: ApplicationListing;
  summary: AppHistorySummary;
  replay: ReplayResult;
}

interface Seen {
  size: number;
  mtimeMs: number;
  log: LogFile;
  /** Its listing, or why it has none (undefined: nothing written yet). */
  listing: ApplicationListing | undefined;
  bad: string | undefined;
}

export interface ScanResult {
  /** Logs read in this scan (new or changed). */
  read: number;
  /** Logs left as they were. */
  unchanged: number;
  /** Logs that cannot be read, each named with why (all of them, warned or not before). */
  bad: { path: string; reason: string }[];
}

export class HistoryProvider {
  readonly logDir: string;
  private readonly seen = new Map<string, Seen>();
  private readonly loaded: LruCache<string, LoadedApplication>;
  private readonly clock: Clock;
  private readonly warn: (message: string) => void;
  private scanning: Promise<ScanResult> | undefined;
  /** One pending timer per periodic task (the scan, the cleaner). */
  private readonly timers: { handle: TimerHandle | undefined }[] = [];
  private stopped = false;

  constructor(private readonly o: HistoryProviderOptions) {
    this.logDir = o.logDir;
    this.loaded = new LruCache(o.retainedApplications ?? 50);
    this.clock = o.clock ?? systemClock;
    this.warn = o.warn ?? (() => {});
  }

  /** A provider over the folder and with the settings `conf` names (wick.history.*). */
  static fromConf(
    conf: WickConf,
    o: { logDir?: string; warn?: (m: string) => void; clock?: Clock } = {},
  ): HistoryProvider {
    return new HistoryProvider({
      logDir: o.logDir ?? historyLogDir(conf),
      endChunkBytes: conf.get(HistoryConf.endEventReparseChunkSize),
      retainedApplications: conf.get(HistoryConf.retainedApplications),
      maxJobs: conf.get(AppConf.retainedJobs),
      maxStages: conf.get(AppConf.retainedStages),
      updateIntervalMs: conf.get(HistoryConf.updateInterval),
      ...(conf.get(HistoryConf.cleanerEnabled)
        ? {
            cleaner: {
              intervalMs: conf.get(HistoryConf.cleanerInterval),
              maxAgeMs: conf.get(HistoryConf.cleanerMaxAge),
              maxNum: conf.get(HistoryConf.cleanerMaxNum),
            },
          }
        : {}),
      ...(o.warn ? { warn: o.warn } : {}),
      ...(o.clock ? { clock: o.clock } : {}),
    });
  }

  /** Looks at the folder again, reading only what is new or changed; one scan at a time. */
  scan(): Promise<ScanResult> {
    this.scanning ??= this.doScan().finally(() => {
      this.scanning = undefined;
    });
    return this.scanning;
  }

  private async doScan(): Promise<ScanResult> {
    const logs = await listLogFiles(this.logDir);
    const result: ScanResult = { read: 0, unchanged: 0, bad: [] };
    const names = new Set(logs.map((l) => l.name));
    for (const name of this.seen.keys()) if (!names.has(name)) this.forget(name);
    for (const log of logs) {
      const before = this.seen.get(log.name);
      if (before && before.size === log.size && before.mtimeMs === log.mtimeMs) {
        result.unchanged++;
        if (before.bad) result.bad.push({ path: log.path, reason: before.bad });
        continue;
      }
      result.read++;
      let r: Awaited<ReturnType<typeof readListing>>;
      try {
        r = await readListing(log, this.o.endChunkBytes ?? 1024 * 1024);
      } catch (err) {
        r = { ok: false, reason: `${log.path} cannot be read: ${(err as Error).message}` };
      }
      const seen: Seen = {
        size: log.size,
        mtimeMs: log.mtimeMs,
        log,
        listing: undefined,
        bad: undefined,
      };
      if (r.ok) seen.listing = r.listing;
      else if ('reason' in r) {
        seen.bad = r.reason;
        result.bad.push({ path: log.path, reason: r.reason });
        this.warn(`Skipping the event log ${log.path}: ${r.reason}`);
      }
      if (r.ok && r.listing.truncated && !log.inProgress) {
        // Named as complete, yet cut inside a line: its end was lost.
        this.warn(
          `The event log ${log.path} ends inside a line (its writer stopped mid-write): listed as incomplete, its events read up to the break`,
        );
      }
      this.seen.set(log.name, seen);
      this.loaded.delete(log.appId);
    }
    return result;
  }

  private forget(name: string): void {
    const s = this.seen.get(name);
    this.seen.delete(name);
    if (s) this.loaded.delete(s.log.appId);
  }

  /** Every application listed, the latest started first (as Spark lists them). */
  applications(): ApplicationListing[] {
    const byApp = new Map<string, ApplicationListing>();
    for (const s of this.seen.values()) {
      const l = s.listing;
      if (!l) continue;
      const had = byApp.get(l.appId);
      // A log seen under two names (a rename at close between two looks): the later one.
      if (!had || preferred(l, had)) byApp.set(l.appId, l);
    }
    return [...byApp.values()].sort(
      (a, b) => b.startTime - a.startTime || a.appId.localeCompare(b.appId),
    );
  }

  /** The logs the last scan could not read, each with why (what a listing page shows apart). */
  unreadable(): { name: string; path: string; reason: string }[] {
    const out: { name: string; path: string; reason: string }[] = [];
    for (const [name, s] of this.seen)
      if (s.bad) out.push({ name, path: s.log.path, reason: s.bad });
    return out.sort((a, b) => a.name.localeCompare(b.name));
  }

  application(appId: string): ApplicationListing | undefined {
    return this.applications().find((a) => a.appId === appId);
  }

  /**
   * Replays an application's log: each event, checked against its schema, to `fn`, in order,
   * streamed. An event that is not one is skipped and counted; a problem (a cut or bad line) ends
   * the replay where it is and is returned. Undefined when no log of `appId` is listed.
   */
  async forEachEvent(
    appId: string,
    fn: (event: WickListenerEvent) => void,
  ): Promise<ReplayResult | undefined> {
    const listing = this.application(appId);
    if (!listing) return undefined;
    const result: ReplayResult = { events: 0, skipped: 0, problems: [] };
    let firstSkip: string | undefined;
    for await (const e of readEventLog(listing.logPath, {
      onProblem: (p) => result.problems.push(p),
    })) {
      if (!isListenerEvent(e)) {
        result.skipped++;
        firstSkip ??= whyNotAnEvent(e);
        continue;
      }
      result.events++;
      fn(e);
    }
    if (firstSkip !== undefined) {
      this.warn(
        `The event log ${listing.logPath}: ${result.skipped} event(s) skipped, the first ${firstSkip}`,
      );
    }
    return result;
  }

  /** An application's jobs and stages from its log, kept among the last few loaded. */
  async load(appId: string): Promise<LoadedApplication | undefined> {
    const listing = this.application(appId);
    if (!listing) return undefined;
    const cached = this.loaded.get(appId);
    if (cached && cached.listing === listing) return cached;
    const builder = new AppSummaryBuilder({
      maxJobs: this.o.maxJobs ?? 1000,
      maxStages: this.o.maxStages ?? 1000,
    });
    const replay = await this.forEachEvent(appId, (e) => builder.add(e));
    if (!replay) return undefined;
    const loaded = { listing, summary: builder.result(), replay };
    this.loaded.set(appId, loaded);
    return loaded;
  }

  /** Deletes what the cleaner's settings say is too old or too many; returns the paths. */
  async clean(settings = this.o.cleaner): Promise<string[]> {
    if (!settings) return [];
    await this.scan();
    const candidates = [...this.seen.entries()].map(([name, s]) => ({
      name,
      mtimeMs: s.mtimeMs,
      completed: s.listing ? s.listing.completed : s.bad !== undefined ? undefined : false,
    }));
    const removed: string[] = [];
    for (const name of logsToClean(
      candidates,
      this.clock.now(),
      settings.maxAgeMs,
      settings.maxNum,
    )) {
      const s = this.seen.get(name);
      if (!s) continue;
      try {
        await rm(s.log.path, { recursive: true, force: true });
        removed.push(s.log.path);
        this.forget(name);
      } catch (err) {
        this.warn(`The cleaner could not delete ${s.log.path}: ${(err as Error).message}`);
      }
    }
    return removed;
  }

  /** Scans now and every wick.history.fs.update.interval; cleans if the cleaner is on. */
  async start(): Promise<void> {
    await this.scan();
    this.every(this.o.updateIntervalMs ?? 10_000, () => this.scan());
    const c = this.o.cleaner;
    if (c) {
      await this.clean();
      this.every(c.intervalMs, () => this.clean());
    }
  }

  stop(): void {
    this.stopped = true;
    for (const t of this.timers) t.handle?.cancel();
  }

  /** Runs `fn` every `ms` after the last run ended (runs never overlap). */
  private every(ms: number, fn: () => Promise<unknown>): void {
    const slot: { handle: TimerHandle | undefined } = { handle: undefined };
    this.timers.push(slot);
    const tick = () => {
      if (this.stopped) return;
      void fn()
        .catch((err: Error) => this.warn(`Reading ${this.logDir} failed: ${err.message}`))
        .finally(() => {
          if (!this.stopped) slot.handle = this.clock.setTimeout(tick, ms);
        });
    };
    slot.handle = this.clock.setTimeout(tick, ms);
  }
}

/** Of two logs of one application: the completed one, else the later written. */
function preferred(a: ApplicationListing, b: ApplicationListing): boolean {
  if (a.completed !== b.completed) return a.completed;
  return a.lastUpdated > b.lastUpdated;
}
