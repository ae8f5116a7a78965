/** @jsxRuntime automatic */
/** @jsxImportSource preact */
import type { ComponentChildren } from 'preact';
import type { AppSummary, ExecutorSummary } from '../../backend/protocol/state.js';
import { formatDate, formatDuration, formatMiB } from '../format.js';
import { href } from '../router.js';
import { Facts, LogLinks, Section, StateBadge, Table } from './common.js';
import { useDashboard } from './context.js';
import { KillButton } from './KillButton.js';

/** One application: its description, its executors (live and removed), and how each changed. */
export function AppPage({ app }: { app: AppSummary }) {
  const { now } = useDashboard();
  const finished = app.state !== 'WAITING' && app.state !== 'RUNNING';
  const facts: [string, ComponentChildren][] = [
    ['ID', app.id],
    ['Name', app.name],
    ['User', app.user],
    [
      'Cores',
      app.maxCores === undefined
        ? `Unlimited (${app.coresGranted} granted)`
        : `${app.maxCores} (${app.coresGranted} granted)`,
    ],
    [
      'Executor cores',
      app.coresPerExecutor === undefined ? 'All of a worker' : String(app.coresPerExecutor),
    ],
    ['Executor memory', formatMiB(app.memoryPerExecutorMB)],
    ['Submit date', formatDate(app.startTime)],
    ['State', <StateBadge key="s" state={app.state} />],
    ['Duration', formatDuration((app.endTime ?? now) - app.startTime)],
    ['Driver', <code key="d">{`${app.driver.address}/${app.driver.name}`}</code>],
  ];
  if (app.state === 'WAITING' && app.waitingReason)
    facts.push(['Waiting because', app.waitingReason]);
  if (app.failure) {
    const at = app.failure.location;
    facts.push([
      'Failed because',
      <div key="why">
        <pre class="failure">{app.failure.message}</pre>
        {at && <code>{`at ${at.file}:${at.line}:${at.column}`}</code>}
      </div>,
    ]);
  }
  const failure = app.lastExecutorFailure;
  if (failure)
    facts.push([
      'Last executor failure',
      <div key="f">
        {`Executor ${failure.execId} on ${failure.workerHostPort}, ${formatDate(failure.time)}:`}
        <pre class="failure">{failure.message}</pre>
      </div>,
    ]);
  return (
    <>
      <Facts label="Application" facts={facts} />
      {!finished && (
        <p>
          <KillButton target={{ kind: 'app', id: app.id }} label={app.id} />
        </p>
      )}
      <Section id="executors" title="Executors" count={app.executors.length}>
        <ExecutorsTable
          executors={app.executors}
          caption="Executors"
          empty="No executor is running."
        />
      </Section>
      <Section id="removed-executors" title="Removed Executors" count={app.removedExecutors.length}>
        <ExecutorsTable
          executors={app.removedExecutors}
          caption="Removed executors"
          empty="No executor has been removed."
        />
      </Section>
      <Section id="history" title="Executor State History">
        <HistoryTable executors={[...app.executors, ...app.removedExecutors]} />
      </Section>
    </>
  );
}

export function ExecutorsTable({
  executors,
  caption,
  empty,
}: {
  executors: ExecutorSummary[];
  caption: string;
  empty: string;
}) {
  return (
    <Table
      caption={caption}
      headers={['Executor ID', 'Worker', 'Cores', 'Memory', 'State', 'Exit code', 'Reason', 'Logs']}
      empty={empty}
      rows={executors.map((e) => (
        <tr key={e.id}>
          <td class="num">{e.id}</td>
          <td>
            <a href={href({ name: 'worker', id: e.workerId })}>{e.workerHostPort}</a>
          </td>
          <td class="num">{e.cores}</td>
          <td class="num">{formatMiB(e.memory)}</td>
          <td>
            <StateBadge state={e.state} />
          </td>
          <td class="num">{e.exitStatus ?? ''}</td>
          <td class="reason">{e.message ?? ''}</td>
          <td>
            <LogLinks source={{ appId: e.appId, executorId: e.id }} label={`executor ${e.id}`} />
          </td>
        </tr>
      ))}
    />
  );
}

/** Every state change of every executor, oldest first, with exit codes and reasons. */
export function HistoryTable({ executors }: { executors: ExecutorSummary[] }) {
  const entries = executors
    .flatMap((e) => e.history.map((h) => ({ exec: e.id, ...h })))
    .sort((a, b) => a.time - b.time || a.exec - b.exec);
  return (
    <Table
      caption="Executor state history"
      headers={['Time', 'Executor ID', 'State', 'Exit code', 'Reason']}
      empty="No executor has changed state yet."
      rows={entries.map((h, i) => (
        <tr key={`${h.exec}-${i}`}>
          <td>{formatDate(h.time)}</td>
          <td class="num">{h.exec}</td>
          <td>
            <StateBadge state={h.state} />
          </td>
          <td class="num">{h.exitStatus ?? ''}</td>
          <td class="reason">{h.message ?? ''}</td>
        </tr>
      ))}
    />
  );
}
