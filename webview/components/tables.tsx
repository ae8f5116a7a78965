/** @jsxRuntime automatic */
/** @jsxImportSource preact */
import type { AppSummary, DriverSummary, WorkerSummary } from '../../backend/protocol/state.js';
import { formatDate, formatDuration, formatMiB } from '../format.js';
import { href } from '../router.js';
import { LogLinks, StateBadge, Table, UsedOf } from './common.js';
import { useDashboard } from './context.js';
import { KillButton } from './KillButton.js';

/** The tables of Spark's master page: workers, applications and drivers. */

export function WorkersTable({ workers }: { workers: WorkerSummary[] }) {
  const { config, now } = useDashboard();
  // Served by the master's web UI, a worker's pages are also under the master's /proxy/<id>/
  // (Spark's reverseProxy): the one link that works in a browser that reaches only the master.
  const proxied = config.mode === 'master' && config.host === 'web';
  return (
    <Table
      caption="Workers"
      headers={['Worker Id', 'Address', 'State', 'Cores', 'Memory', 'Last heartbeat', 'Web UI']}
      empty="No workers have registered."
      rows={workers.map((w) => (
        <tr key={w.id}>
          <td>
            <a href={href({ name: 'worker', id: w.id })}>{w.id}</a>
          </td>
          <td>
            {w.host}:{w.port}
          </td>
          <td>
            <StateBadge state={w.state} />
          </td>
          <td class="num">
            <UsedOf total={String(w.cores)} used={String(w.coresUsed)} />
          </td>
          <td class="num">
            <UsedOf total={formatMiB(w.memory)} used={formatMiB(w.memoryUsed)} />
          </td>
          <td class="heartbeat" data-heartbeat={w.lastHeartbeat}>
            {formatDate(w.lastHeartbeat)}{' '}
            <span class="muted">({formatDuration(Math.max(0, now - w.lastHeartbeat))} ago)</span>
          </td>
          <td>
            {/^https?:\/\//.test(w.webUiAddress) ? (
              <a href={w.webUiAddress} target="_blank" rel="noopener noreferrer">
                {w.webUiAddress}
              </a>
            ) : (
              w.webUiAddress
            )}
            {proxied && (
              <>
                {' '}
                (<a href={`proxy/${encodeURIComponent(w.id)}/`}>through the master</a>)
              </>
            )}
          </td>
        </tr>
      ))}
    />
  );
}

export function AppsTable({
  apps,
  caption,
  empty,
  completed = false,
}: {
  apps: AppSummary[];
  caption: string;
  empty: string;
  completed?: boolean;
}) {
  const { now, capabilities } = useDashboard();
  const headers = [
    'Application ID',
    'Name',
    'Cores',
    'Memory per Executor',
    'Submitted Time',
    'User',
    'State',
    'Duration',
  ];
  const kill = !completed && capabilities.killEnabled;
  if (kill) headers.push('Actions');
  return (
    <Table
      caption={caption}
      headers={headers}
      empty={empty}
      rows={apps.map((a) => (
        <tr key={a.id}>
          <td>
            <a href={href({ name: 'app', id: a.id })}>{a.id}</a>
          </td>
          <td>{a.name}</td>
          <td class="num">{a.coresGranted}</td>
          <td class="num">{formatMiB(a.memoryPerExecutorMB)}</td>
          <td>{formatDate(a.startTime)}</td>
          <td>{a.user}</td>
          <td>
            <StateBadge state={a.state} />
            {a.state === 'WAITING' && a.waitingReason && (
              <div class="reason">{a.waitingReason}</div>
            )}
          </td>
          <td class="num">{formatDuration((a.endTime ?? now) - a.startTime)}</td>
          {kill && (
            <td>
              <KillButton target={{ kind: 'app', id: a.id }} label={a.id} />
            </td>
          )}
        </tr>
      ))}
    />
  );
}

export function DriversTable({
  drivers,
  caption,
  empty,
  completed = false,
}: {
  drivers: DriverSummary[];
  caption: string;
  empty: string;
  completed?: boolean;
}) {
  const { capabilities } = useDashboard();
  const headers = [
    'Submission ID',
    'Submitted Time',
    'Worker',
    'State',
    'Cores',
    'Memory',
    'Main',
    'Logs',
  ];
  const kill = !completed && capabilities.killEnabled;
  if (kill) headers.push('Actions');
  return (
    <Table
      caption={caption}
      headers={headers}
      empty={empty}
      rows={drivers.map((d) => (
        <tr key={d.id}>
          <td>
            {d.id}
            {d.relaunchedFrom && <div class="reason">relaunch of {d.relaunchedFrom}</div>}
          </td>
          <td>{formatDate(d.submitDate)}</td>
          <td>
            {d.workerId ? <a href={href({ name: 'worker', id: d.workerId })}>{d.workerId}</a> : '—'}
          </td>
          <td>
            <StateBadge state={d.state} />
            {d.exception && <div class="reason">{d.exception}</div>}
          </td>
          <td class="num">{d.cores}</td>
          <td class="num">{formatMiB(d.mem)}</td>
          <td class="path">{d.appPath}</td>
          <td>{d.workerId ? <LogLinks source={{ driverId: d.id }} label={d.id} /> : '—'}</td>
          {kill && (
            <td>
              <KillButton target={{ kind: 'driver', id: d.id }} label={d.id} />
            </td>
          )}
        </tr>
      ))}
    />
  );
}
