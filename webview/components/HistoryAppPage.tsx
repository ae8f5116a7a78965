/** @jsxRuntime automatic */
/** @jsxImportSource preact */
import type { ComponentChildren } from 'preact';
import { formatDate, formatDuration } from '../format.js';
import { href } from '../router.js';
import type { ApplicationInfo } from '../status/sparkJson.js';
import { AppStatusSections } from './AppStatusSections.js';
import { StateBadge } from './common.js';

/**
 * A logged application on the history server: what its log's first and last events say (Spark's
 * ApplicationInfo), then the master's own sections over its replayed log: its jobs, the event
 * timeline and what each executor ran. No master state, so none of the live application page's
 * parts (granted cores, the worker's executors, kill).
 */
export function HistoryAppPage({
  appId,
  app,
}: {
  appId: string;
  app: ApplicationInfo | undefined;
}) {
  const at = app?.attempts[0];
  const ended = at?.completed && at.endTimeEpoch >= 0 ? at.endTimeEpoch : undefined;
  const facts: [string, ComponentChildren][] = at
    ? [
        ['ID', appId],
        ['Name', app?.name ?? ''],
        ['User', at.sparkUser],
        ['Started', formatDate(at.startTimeEpoch)],
        ['State', <StateBadge key="s" state={at.completed ? 'COMPLETED' : 'INCOMPLETE'} />],
        ['Completed', ended !== undefined ? formatDate(ended) : 'No end logged'],
        ['Duration', ended !== undefined ? formatDuration(ended - at.startTimeEpoch) : ''],
        ['Last updated', formatDate(at.lastUpdatedEpoch)],
      ]
    : [['ID', appId]];
  return (
    <>
      <p class="crumbs">
        <a
          href={href({
            name: 'overview',
            ...(at && !at.completed ? { showIncomplete: true } : {}),
          })}
        >
          Back to the applications
        </a>
      </p>
      <dl class="facts" aria-label="Application">
        {facts.map(([k, v]) => (
          <div key={k}>
            <dt>{k}</dt>
            <dd>{v}</dd>
          </div>
        ))}
      </dl>
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
