/** @jsxRuntime automatic */
/** @jsxImportSource preact */
import { useEffect, useState } from 'preact/hooks';
import { formatDate, formatDuration } from '../format.js';
import type { HistoryInfo } from '../protocol.js';
import { href } from '../router.js';
import type { ApplicationInfo } from '../status/sparkJson.js';
import { Section, StateBadge, Table } from './common.js';
import { useDashboard } from './context.js';

/**
 * The history server's front page (Spark's HistoryPage): the logged applications, the completed
 * ones by default and the incomplete ones (still running, or whose driver died before its end was
 * logged) behind Spark's "Show incomplete applications"; each id opens its pages. Below, the logs
 * in the folder that cannot be read, each named with why, so that a run missing from the list is
 * explained rather than silently absent.
 */
export function HistoryListing({
  apps,
  error,
  showIncomplete,
}: {
  apps: ApplicationInfo[] | undefined;
  error: string | undefined;
  showIncomplete: boolean;
}) {
  const info = useHistoryInfo();
  const cut = new Set(info.data?.cut ?? []);
  const failed = new Set(info.data?.failed ?? []);
  const shown = (apps ?? []).filter((a) => (a.attempts[0]?.completed ?? false) !== showIncomplete);
  const kind = showIncomplete ? 'incomplete' : 'completed';
  return (
    <>
      <dl class="facts" aria-label="History server">
        <div>
          <dt>Event log directory</dt>
          <dd>{info.data ? <code>{info.data.logDir}</code> : '…'}</dd>
        </div>
        <div>
          <dt>Client local time zone</dt>
          <dd>{Intl.DateTimeFormat().resolvedOptions().timeZone}</dd>
        </div>
      </dl>
      {error && !apps ? (
        <p role="status">{`The applications could not be listed: ${error}`}</p>
      ) : !apps ? (
        <vscode-progress-ring aria-label="Loading the applications" />
      ) : (
        <Section
          id="history-apps"
          title={showIncomplete ? 'Incomplete Applications' : 'Completed Applications'}
          count={shown.length}
        >
          <Table
            caption={`${kind} applications`}
            headers={[
              'App ID',
              'App Name',
              'Started',
              'Completed',
              'Duration',
              'Spark User',
              'Last Updated',
            ]}
            empty={`No ${kind} applications found!`}
            rows={shown.map((a) => {
              const at = a.attempts[0];
              const ended = at?.completed && at.endTimeEpoch >= 0 ? at.endTimeEpoch : undefined;
              return (
                <tr key={a.id} data-app={a.id}>
                  <td>
                    <a href={href({ name: 'app', id: a.id })}>{a.id}</a>
                    {failed.has(a.id) && (
                      <>
                        {' '}
                        <StateBadge state="FAILED" />
                      </>
                    )}
                    {cut.has(a.id) && (
                      <span class="muted" title="Its log ends inside a line: read up to the break">
                        {' '}
                        (log cut short)
                      </span>
                    )}
                  </td>
                  <td>{a.name}</td>
                  <td>{at ? formatDate(at.startTimeEpoch) : ''}</td>
                  <td>{ended !== undefined ? formatDate(ended) : ''}</td>
                  <td class="num">
                    {at && ended !== undefined ? formatDuration(ended - at.startTimeEpoch) : ''}
                  </td>
                  <td>{at?.sparkUser ?? ''}</td>
                  <td>{at ? formatDate(at.lastUpdatedEpoch) : ''}</td>
                </tr>
              );
            })}
          />
        </Section>
      )}
      <p>
        {showIncomplete ? (
          <a href={href({ name: 'overview' })}>Back to completed applications</a>
        ) : (
          <a href={href({ name: 'overview', showIncomplete: true })}>
            Show incomplete applications
          </a>
        )}
        {apps && (
          <span class="muted">
            {` (${apps.length - shown.length} ${showIncomplete ? 'completed' : 'incomplete'})`}
          </span>
        )}
      </p>
      {info.error && <p role="status">{`The folder's state could not be read: ${info.error}`}</p>}
      {info.data && info.data.unreadableCount > 0 && (
        <Section
          id="unreadable"
          title="Event Logs That Cannot Be Read"
          count={info.data.unreadableCount}
        >
          <Table
            caption="Event logs that cannot be read"
            headers={['Event Log', 'Why']}
            empty=""
            rows={info.data.unreadable.map((b) => (
              <tr key={b.name} data-log={b.name}>
                <td>
                  <code>{b.name}</code>
                </td>
                <td class="reason">{b.reason}</td>
              </tr>
            ))}
          />
          {info.data.unreadableCount > info.data.unreadable.length && (
            <p class="muted">{`The first ${info.data.unreadable.length} of ${info.data.unreadableCount} are shown.`}</p>
          )}
        </Section>
      )}
    </>
  );
}

/** `/api/history`, read once each time the listing opens. */
function useHistoryInfo(): { data: HistoryInfo | undefined; error: string | undefined } {
  const { source } = useDashboard();
  const [r, setR] = useState<{ data: HistoryInfo | undefined; error: string | undefined }>({
    data: undefined,
    error: undefined,
  });
  useEffect(() => {
    if (!source?.historyInfo) return;
    let current = true;
    source.historyInfo().then(
      (data) => current && setR({ data, error: undefined }),
      (err: Error) => current && setR({ data: undefined, error: err.message }),
    );
    return () => {
      current = false;
    };
  }, [source]);
  return r;
}
