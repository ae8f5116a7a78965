/**
 * `/api/history`: what the history server's listing page shows beside Spark's
 * `/api/v1/applications` and that Spark's JSON has no field for: the folder it reads (Spark's
 * page says "Event log directory"), the logs it cannot read, each named with why (Spark only
 * logs them; a user looking for a run should see why it is not listed), and the applications
 * whose log ends inside a line (listed as incomplete, read up to the break). Bounded: a folder
 * full of junk is answered with the first MAX_UNREADABLE_SHOWN and their count.
 */
import type { Hono } from 'hono';
import type { HistoryInfo } from '../../webview/protocol.js';
import type { HistoryProvider } from '../history/HistoryProvider.js';
import { clip } from '../rpc/peerText.js';

export const MAX_UNREADABLE_SHOWN = 100;
export const MAX_REASON_LENGTH = 1_000;

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
  };
}

export function mountHistoryInfo(app: Hono, provider: HistoryProvider): void {
  app.get('/api/history', (c) => c.json(historyInfo(provider)));
}
