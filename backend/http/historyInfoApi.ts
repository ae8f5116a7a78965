/**
 * `/api/history`: what the history server's listing page shows beside Spark's
 * `/api/v1/applications` and that Spark's JSON has no field for: the folder it reads (Spark's
 * page says "Event log directory"), the logs it cannot read, each named with why (Spark only
 * logs them; a user looking for a run should see why it is not listed), and the applications
 * whose log ends inside a line (listed as incomplete, read up to the break) or that failed; and
 * `/api/history/applications/{app}`, one application's log and its failure, for its page.
 * Bounded: a folder full of junk is answered with the first MAX_UNREADABLE_SHOWN and their count.
 */
import type { Hono } from 'hono';
import type { HistoryAppInfo, HistoryInfo } from '../../webview/protocol.js';
import type { HistoryProvider } from '../history/HistoryProvider.js';
import { clip } from '../rpc/peerText.js';

export const MAX_UNREADABLE_SHOWN = 100;
export const MAX_REASON_LENGTH = 1_000;
/** An application's failure as its page quotes it (a user's stack: lines kept). */
export const MAX_FAILURE_LENGTH = 8_000;

export function historyInfo(provider: HistoryProvider): HistoryInfo {
  const bad = provider.unreadable();
  return {
    logDir: provider.logDir,
    unreadableCount: bad.length,
    unreadable: bad.slice(0, MAX_UNREADABLE_SHOWN).map((b) => ({
      name: b.name,
      // The reason quotes the file's bytes: its control characters are not shown as they are.
      reason: clip(b.reason, MAX_REASON_LENGTH),
    })),
    cut: provider
      .applications()
      .filter((a) => a.truncated)
      .map((a) => a.appId),
    failed: provider
      .applications()
      .filter((a) => a.failure !== undefined)
      .map((a) => a.appId),
  };
}

/** One application's log, as its page names it; undefined when no log of it is listed. */
export function historyAppInfo(
  provider: HistoryProvider,
  appId: string,
): HistoryAppInfo | undefined {
  const a = provider.application(appId);
  if (!a) return undefined;
  return {
    appId: a.appId,
    logName: a.logName,
    fileSize: a.fileSize,
    cut: a.truncated,
    compressed: a.compressed,
    rolled: a.rolled,
    ...(a.failure !== undefined ? { failure: printableLines(a.failure, MAX_FAILURE_LENGTH) } : {}),
  };
}

export function mountHistoryInfo(app: Hono, provider: HistoryProvider): void {
  app.get('/api/history', (c) => c.json(historyInfo(provider)));
  app.get('/api/history/applications/:app', (c) => {
    const id = c.req.param('app');
    const info = historyAppInfo(provider, id);
    return info
      ? c.json(info)
      : c.json({ error: `No event log of application ${JSON.stringify(id)} is listed` }, 404);
  });
}

/** Text with its lines and tabs, other control characters shown as `?`, cut at `max`. */
function printableLines(text: string, max: number): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: removing them is the point
  const clean = text.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, '?');
  return clean.length <= max ? clean : `${clean.slice(0, max)}…`;
}
