/**
 * `wick status <app-id>`'s jobs and stages for an application the master cannot show them for:
 * read from its event log (the history service's provider over wick.history.fs.logDirectory), so
 * that an application that ended, fell out of the master's retained list or outlived a master
 * restart is still found. (A master that keeps a live summary of an application's jobs answers
 * for a running one first: that is the master's part, not this file's.)
 */
import type { WickConf } from '../../conf/WickConf.js';
import { HistoryProvider, type LoadedApplication } from '../../history/HistoryProvider.js';
import { formatAppHistory, formatJobsAndStages } from './historyFormat.js';

/** The application's log, loaded; undefined when no log of it is in the folder. */
export async function appFromEventLog(
  appId: string,
  conf: WickConf,
): Promise<LoadedApplication | undefined> {
  if (!/^app-/.test(appId)) return undefined;
  // Only what concerns this application's log: the folder's other bad files are `wick history`'s.
  const provider = HistoryProvider.fromConf(conf, {
    warn: (m) => {
      if (m.includes(appId)) process.stderr.write(`wick: ${m}\n`);
    },
  });
  await provider.scan();
  return provider.load(appId);
}

/** What the master said of the application, then its jobs and stages from its log. */
export function withJobsFromLog(masterText: string, app: LoadedApplication): string {
  return `${masterText}${[`  event log ${app.listing.logPath}:`, ...formatJobsAndStages(app.summary).map((l) => `  ${l}`)].join('\n')}\n`;
}

/** The application from its log alone, after why the master did not tell. */
export function fromLogOnly(why: string, app: LoadedApplication): string {
  return `${why}; from its event log:\n${formatAppHistory(app)}`;
}
