/** @jsxRuntime automatic */
/** @jsxImportSource preact */
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { WorkerSummary } from '../../backend/protocol/state.js';
import { formatDate, formatMiB } from '../format.js';
import type { WorkerState } from '../protocol.js';
import { href } from '../router.js';
import { Facts, LogLinks, Section, StateBadge, Table, UsedOf } from './common.js';
import { useDashboard } from './context.js';

type Runner = WorkerState['executors'][number];

/**
 * One worker, as Spark's worker page: what the master knows of it (summary) and what the worker
 * itself reports (its runners, finished ones included), read again whenever `version` changes,
 * that is when a pushed change touched it. Nothing is re-read on a timer.
 */
export function WorkerPage({
  workerId,
  summary,
  version,
}: {
  workerId: string | undefined;
  summary: WorkerSummary | undefined;
  version: unknown;
}) {
  const { source } = useDashboard();
  const [detail, setDetail] = useState<WorkerState | undefined>();
  const [error, setError] = useState<string | undefined>();
  const dead = summary !== undefined && summary.state !== 'ALIVE';
  useEffect(() => {
    if (!source || dead) return;
    let live = true;
    source.workerState(workerId).then(
      (s) => {
        if (!live) return;
        setDetail(s);
        setError(undefined);
      },
      (err: Error) => live && setError(err.message),
    );
    return () => {
      live = false;
    };
  }, [source, workerId, version, dead]);
  return <WorkerView summary={summary} detail={detail} error={error} />;
}

export function WorkerView({
  summary,
  detail,
  error,
}: {
  summary: WorkerSummary | undefined;
  detail: WorkerState | undefined;
  error?: string | undefined;
}) {
  const facts: [string, ComponentChildren][] = [];
  const id = summary?.id ?? detail?.workerId;
  if (id) facts.push(['ID', id]);
  if (summary) {
    facts.push(['Address', `${summary.host}:${summary.port}`]);
    facts.push(['State', <StateBadge key="s" state={summary.state} />]);
    facts.push(['Last heartbeat', formatDate(summary.lastHeartbeat)]);
  } else if (detail) {
    facts.push(['Address', `${detail.host}:${detail.port}`]);
  }
  if (detail?.masterUrl) {
    facts.push([
      'Master URL',
      detail.masterWebUiUrl && /^https?:\/\//.test(detail.masterWebUiUrl) ? (
        <a key="m" href={detail.masterWebUiUrl}>
          {detail.masterUrl}
        </a>
      ) : (
        detail.masterUrl
      ),
    ]);
  }
  const cores = detail ?? summary;
  if (cores) {
    facts.push([
      'Cores',
      <UsedOf key="c" total={String(cores.cores)} used={String(cores.coresUsed)} />,
    ]);
    facts.push([
      'Memory',
      <UsedOf key="m" total={formatMiB(cores.memory)} used={formatMiB(cores.memoryUsed)} />,
    ]);
  }
  if (detail) facts.push(['Work dir', <code key="w">{detail.workDir}</code>]);
  return (
    <>
      <Facts label="Worker" facts={facts} />
      {error && (
        <p class="error" role="alert">
          The worker's own state could not be read: {error}
        </p>
      )}
      {detail ? (
        <>
          <Section id="w-executors" title="Running Executors" count={detail.executors.length}>
            <RunnersTable
              runners={detail.executors}
              caption="Running executors"
              empty="No executor runs here."
            />
          </Section>
          <Section id="w-drivers" title="Running Drivers" count={detail.drivers.length}>
            <RunnersTable
              runners={detail.drivers}
              caption="Running drivers"
              empty="No driver runs here."
            />
          </Section>
          <Section
            id="w-finished-executors"
            title="Finished Executors"
            count={detail.finishedExecutors.length}
          >
            <RunnersTable
              runners={[...detail.finishedExecutors].reverse()}
              caption="Finished executors"
              empty="No executor has finished here."
            />
          </Section>
          <Section
            id="w-finished-drivers"
            title="Finished Drivers"
            count={detail.finishedDrivers.length}
          >
            <RunnersTable
              runners={[...detail.finishedDrivers].reverse()}
              caption="Finished drivers"
              empty="No driver has finished here."
            />
          </Section>
        </>
      ) : (
        summary && (
          <Section id="w-executors" title="Executors" count={summary.executors.length}>
            <Table
              caption="Executors"
              headers={['Application', 'Executor ID', 'Logs']}
              empty="No executor runs here."
              rows={summary.executors.map((e) => (
                <tr key={`${e.appId}/${e.execId}`}>
                  <td>
                    <a href={href({ name: 'app', id: e.appId })}>{e.appId}</a>
                  </td>
                  <td class="num">{e.execId}</td>
                  <td>
                    <LogLinks
                      source={{ appId: e.appId, executorId: e.execId }}
                      label={`executor ${e.execId} of ${e.appId}`}
                    />
                  </td>
                </tr>
              ))}
            />
          </Section>
        )
      )}
    </>
  );
}

function RunnersTable({
  runners,
  caption,
  empty,
}: {
  runners: Runner[];
  caption: string;
  empty: string;
}) {
  // A worker's own page has no application pages to link to; the master's has.
  const { config } = useDashboard();
  const appLink = (appId: string) =>
    config.mode === 'master' ? <a href={href({ name: 'app', id: appId })}>{appId}</a> : appId;
  return (
    <Table
      caption={caption}
      headers={['ID', 'Application', 'State', 'Cores', 'Memory', 'Exit code', 'Reason', 'Logs']}
      empty={empty}
      rows={runners.map((r) => {
        const isDriver = r.driverId !== undefined;
        const key = isDriver ? (r.driverId as string) : `${r.appId}/${r.execId}`;
        const label = isDriver ? (r.driverId as string) : `executor ${r.execId} of ${r.appId}`;
        return (
          <tr key={key}>
            <td>{isDriver ? r.driverId : r.execId}</td>
            <td>{r.appId ? appLink(r.appId) : '—'}</td>
            <td>
              <StateBadge state={r.state} />
            </td>
            <td class="num">{r.cores}</td>
            <td class="num">{formatMiB(r.memory)}</td>
            <td class="num">{r.exitCode ?? ''}</td>
            <td class="reason">{r.message ?? ''}</td>
            <td>
              <LogLinks
                source={
                  isDriver ? { driverId: r.driverId } : { appId: r.appId, executorId: r.execId }
                }
                label={label}
              />
            </td>
          </tr>
        );
      })}
    />
  );
}
