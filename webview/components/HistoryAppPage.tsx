/** @jsxRuntime automatic */
/** @jsxImportSource preact */
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { formatBytes, formatDate, formatDuration } from '../format.js';
import type { HistoryAppInfo } from '../protocol.js';
import { href } from '../router.js';
import type { ApplicationInfo } from '../status/sparkJson.js';
import { AppStatusSections } from './AppStatusSections.js';
import { Facts, StateBadge } from './common.js';
import { useDashboard } from './context.js';

/**
 * A logged application on the history server: what its log's first and last events say (Spark's
 * ApplicationInfo), then the master's own sections over its replayed log: its jobs, the event
 * timeline and what each executor ran. No master state, so none of the live application page's
 * parts (granted cores, the worker's executors, kill).
 */
export function HistoryAppPage({
  appId,
  app,
  back,
}: {
  appId: string;
  app: ApplicationInfo | undefined;
  /** Where "Back to the applications" goes (a history server's listing by default). */
  back?: string;
}) {
  const log = useHistoryApp(appId);
  const at = app?.attempts[0];
  const state = !at?.completed ? 'INCOMPLETE' : log?.failure !== undefined ? 'FAILED' : 'COMPLETED';
  const ended = at?.completed && at.endTimeEpoch >= 0 ? at.endTimeEpoch : undefined;
  const facts: [string, ComponentChildren][] = at
    ? [
        ['ID', appId],
        ['Name', app?.name ?? ''],
        ['User', at.sparkUser],
        ['Started', formatDate(at.startTimeEpoch)],
        ['State', <StateBadge key="s" state={state} />],
        ['Completed', ended !== undefined ? formatDate(ended) : 'No end logged'],
        ['Duration', ended !== undefined ? formatDuration(ended - at.startTimeEpoch) : ''],
        ['Last updated', formatDate(at.lastUpdatedEpoch)],
      ]
    : [['ID', appId]];
  if (log)
    facts.push([
      'Event log',
      <span key="l">
        <code>{log.logName}</code>
        {` (${formatBytes(log.fileSize)}${log.compressed ? ', compressed' : ''}${log.rolled ? ', rolled' : ''})`}
        {log.cut && ' cut short: read up to the break'}
      </span>,
    ]);
  if (log?.failure !== undefined)
    facts.push([
      'Failed because',
      <pre key="f" class="failure">
        {log.failure}
      </pre>,
    ]);
  return (
    <>
      <p class="crumbs">
        <a
          href={
            back ??
            href({
              name: 'overview',
              ...(at && !at.completed ? { showIncomplete: true } : {}),
            })
          }
        >
          Back to the applications
        </a>
      </p>
      <Facts label="Application" facts={facts} />
      {at && !at.completed && (
        <p class="muted">
          Its log has no end: the application still runs, or its driver stopped before it logged
          one. What the log holds so far follows, as read when this page opened.
        </p>
      )}
      <AppStatusSections appId={appId} version="logged" />
    </>
  );
}

/** `/api/history/applications/{app}`, read when the page opens; nothing shown if it fails. */
function useHistoryApp(appId: string): HistoryAppInfo | undefined {
  const { source } = useDashboard();
  const [r, setR] = useState<{ appId: string; info: HistoryAppInfo } | undefined>(undefined);
  useEffect(() => {
    if (!source?.historyApp) return;
    let current = true;
    source.historyApp(appId).then(
      (info) => current && setR({ appId, info }),
      () => {},
    );
    return () => {
      current = false;
    };
  }, [source, appId]);
  return r?.appId === appId ? r.info : undefined;
}
