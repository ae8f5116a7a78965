/**
 * A past run's dashboard pages and its failed task, read by the agent from the run's event log.
 * After a reload the run's master is gone: the master the agent talks to now (the next local
 * cluster, a remote one, or none) is not where its pages are, so the agent answers for its own
 * runs. The pages are the history server's: the same /api/v1 routes over the same replay of the
 * log, handed in by the CLI as a `LoggedPagesFactory` (the agent does not import the web UIs;
 * docs/architecture.md, "Layers"). Only the runs in this folder's records are answered, decided
 * here from those records, never from what the panel says.
 */

import type { HistoryProvider } from '../history/HistoryProvider.js';
import { MAX_API_BODY_BYTES } from '../protocol/client.js';
import { FailedTaskFinder } from './failedTaskFromLog.js';
import type { LoggedFailedTask, PastRunLog } from './protocol.js';
import type { RunStore } from './runStore.js';

/** What the history server answers for one application, over the agent's provider. */
export interface LoggedPages {
  /** `/api/v1` + path, as the history server answers it. */
  api(path: string): Promise<{ status: number; body: string }>;
  /** `/api/history/applications/{app}`: its log, and how it ended. */
  logInfo(appId: string): PastRunLog | undefined;
}
export type LoggedPagesFactory = (provider: HistoryProvider) => LoggedPages;

const APP_ID = /^app-[\w.-]{1,200}$/;
const APP_OF_PATH = /^\/applications\/([A-Za-z0-9._-]+)(?:[/?]|$)/;

export class PastRunPages {
  private readonly pages: LoggedPages;

  constructor(
    private readonly runs: RunStore,
    /** The running local cluster's work dir: its runs are the master's, not past ones. */
    private readonly currentClusterDir: () => string | undefined,
    private readonly provider: HistoryProvider,
    factory: LoggedPagesFactory,
    /** Whether the master connected now lists `appId`: then it is the master's, as the panel says. */
    private readonly masterHas: (appId: string) => boolean = () => false,
  ) {
    this.pages = factory(provider);
  }

  /** Whether `appId` is a run of an earlier local cluster of this folder (and no live master's). */
  isPastRun(appId: string): boolean {
    if (!APP_ID.test(appId) || this.masterHas(appId)) return false;
    const current = this.currentClusterDir();
    return this.runs.all().some((r) => r.appId === appId && r.clusterDir !== current);
  }

  /** The past run a `/api/v1` path is about, if it is one's. */
  pastRunOfPath(path: string): string | undefined {
    const id = APP_OF_PATH.exec(path)?.[1];
    return id !== undefined && this.isPastRun(id) ? id : undefined;
  }

  /** `/api/v1` + path for a past run, from its event log; bounded as the master's answer is. */
  async api(appId: string, path: string): Promise<{ status: number; body: string }> {
    if (!(await this.listed(appId)))
      return { status: 404, body: JSON.stringify({ error: this.noLog(appId) }) };
    const r = await this.pages.api(path);
    const bytes = Buffer.byteLength(r.body);
    if (bytes > MAX_API_BODY_BYTES)
      throw new Error(
        `/api/v1${path} is ${bytes} bytes, more than ${MAX_API_BODY_BYTES} (MAX_API_BODY_BYTES): ask a smaller page (taskList's length)`,
      );
    return r;
  }

  async log(appId: unknown): Promise<{ log?: PastRunLog; reason?: string }> {
    const id = this.checked(appId);
    if (typeof id !== 'string') return id;
    const log = (await this.listed(id)) ? this.pages.logInfo(id) : undefined;
    return log ? { log } : { reason: this.noLog(id) };
  }

  /** The failed task of the run's last failed job, from one replay of its log. */
  async failedTask(appId: unknown): Promise<{ task?: LoggedFailedTask; reason?: string }> {
    const id = this.checked(appId);
    if (typeof id !== 'string') return id;
    const finder = new FailedTaskFinder();
    const replayed = (await this.listed(id))
      ? await this.provider.forEachEvent(id, (e) => finder.post(e))
      : undefined;
    if (!replayed) return { reason: this.noLog(id) };
    const task = finder.result;
    if (task) return { task };
    const cut = replayed.problems[0];
    return {
      reason: `No job of ${id} failed because of a task, as its event log ${this.provider.application(id)?.logPath ?? ''} tells${cut ? ` (read up to line ${cut.line}: ${cut.message})` : ''}`,
    };
  }

  /** A valid id of a past run, or why not (as a value: the command tells the user). */
  private checked(appId: unknown): string | { reason: string } {
    if (typeof appId !== 'string' || !APP_ID.test(appId))
      return {
        reason: `Invalid application id ${JSON.stringify(String(appId).slice(0, 200))}: expected app-…`,
      };
    if (!this.isPastRun(appId))
      return {
        reason: `${appId} is not a run of an earlier local cluster of this folder (its pages are its master's)`,
      };
    return appId;
  }

  /** Whether the provider lists the run's log, looking at the folder again when it does not. */
  private async listed(appId: string): Promise<boolean> {
    if (this.provider.application(appId)) return true;
    await this.provider.scan().catch(() => undefined);
    return this.provider.application(appId) !== undefined;
  }

  private noLog(appId: string): string {
    return `No event log of ${appId} is in ${this.provider.logDir} (wick.eventLog.enabled was off for it, or the log was cleaned)`;
  }
}
