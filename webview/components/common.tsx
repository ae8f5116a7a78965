/** @jsxRuntime automatic */
/** @jsxImportSource preact */
import type { ComponentChildren } from 'preact';
import { stateClass } from '../format.js';
import type { LogSource } from '../protocol.js';
import { href, logHref } from '../router.js';
import { useDashboard } from './context.js';

/** A state as text with a colour: the word carries the meaning, the colour only helps. */
export function StateBadge({ state }: { state: string }) {
  return <span class={stateClass(state)}>{state}</span>;
}

/** A titled part of a page; the heading names its region for screen readers. */
export function Section({
  id,
  title,
  count,
  children,
}: {
  id: string;
  title: string;
  count?: number;
  children: ComponentChildren;
}) {
  return (
    <section class="section" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>
        {title}
        {count !== undefined && (
          <vscode-badge
            variant="counter"
            aria-label={`${count} ${count === 1 ? 'entry' : 'entries'}`}
          >
            {count}
          </vscode-badge>
        )}
      </h2>
      {children}
    </section>
  );
}

/** A table with a caption for screen readers, or a line saying it is empty. */
export function Table({
  caption,
  headers,
  empty,
  rows,
}: {
  caption: string;
  headers: string[];
  empty: string;
  rows: ComponentChildren[];
}) {
  if (rows.length === 0) return <p class="empty">{empty}</p>;
  return (
    <div class="table-wrap">
      <table>
        <caption class="sr-only">{caption}</caption>
        <thead>
          <tr>
            {headers.map((h) => (
              <th scope="col" key={h}>
                {h}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{rows}</tbody>
      </table>
    </div>
  );
}

/** Links to an executor's or a driver's stdout and stderr. */
export function LogLinks({ source, label }: { source: Omit<LogSource, 'logType'>; label: string }) {
  // A history server reads event logs only: the processes' own logs stay with their workers.
  if (useDashboard().config.mode === 'history') return null;
  return (
    <span class="log-links">
      <a href={logHref({ ...source, logType: 'stdout' })} aria-label={`stdout of ${label}`}>
        stdout
      </a>{' '}
      <a href={logHref({ ...source, logType: 'stderr' })} aria-label={`stderr of ${label}`}>
        stderr
      </a>
    </span>
  );
}

/** "4 (2 Used)", as Spark's worker table writes cores and memory. */
/** A page's key facts, a term and its value each, named for screen readers by `label`. */
export function Facts({ label, facts }: { label: string; facts: [string, ComponentChildren][] }) {
  return (
    <dl class="facts" aria-label={label}>
      {facts.map(([k, v]) => (
        <div key={k}>
          <dt>{k}</dt>
          <dd>{v}</dd>
        </div>
      ))}
    </dl>
  );
}

export function UsedOf({ total, used }: { total: string; used: string }) {
  return (
    <>
      {total} <span class="muted">({used} Used)</span>
    </>
  );
}

/** An application's sub-page while its main data loads (or why it could not), under the way back. */
export function SubPagePending({ appId, error }: { appId: string; error: string | undefined }) {
  return (
    <>
      <BackToApp appId={appId} />
      {error ? <p role="status">{error}</p> : <vscode-progress-ring aria-label="Loading" />}
    </>
  );
}

/** The way back from a job's or a stage's page to its application's. */
export function BackToApp({ appId }: { appId: string }) {
  return (
    <p class="crumbs">
      <a href={href({ name: 'app', id: appId })}>Back to application {appId}</a>
    </p>
  );
}
