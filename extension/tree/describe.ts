/**
 * "Describe": an item's whole state as text, as `kubectl describe` prints a resource: aligned
 * "Field: value" lines, then its parts (executors, drivers) as tables and its history as Events.
 * Pure (no vscode): unit-tested; describeDocuments.ts shows it as a read-only document.
 */
import type { MasterState } from '../../backend/agent/protocol.js';
import type {
  AppSummary,
  DriverSummary,
  ExecutorSummary,
  WorkerSummary,
} from '../../backend/protocol/state.js';
import { duration, mb } from './nodes/item.js';

export type DescribeTarget =
  | { kind: 'master' }
  | { kind: 'worker'; id: string }
  | { kind: 'app'; id: string }
  | { kind: 'executor'; appId: string; execId: number }
  | { kind: 'driver'; id: string };

const time = (ms: number | undefined) => (ms === undefined ? '<none>' : new Date(ms).toISOString());

function fields(rows: [string, string | number | undefined][]): string {
  const shown = rows.filter(([, v]) => v !== undefined && v !== '') as [string, string | number][];
  const w = Math.max(...shown.map(([k]) => k.length)) + 2;
  return shown
    .map(([k, v]) => {
      const [first, ...more] = String(v).split('\n');
      return [`${`${k}:`.padEnd(w)}${first}`, ...more.map((l) => `${' '.repeat(w)}${l}`)].join(
        '\n',
      );
    })
    .join('\n');
}

function table(title: string, headers: string[], rows: string[][]): string {
  if (rows.length === 0) return `${title}:  <none>`;
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) =>
    `  ${r.map((c, i) => c.padEnd(widths[i] ?? 0)).join('   ')}`.trimEnd();
  return [
    `${title}:`,
    line(headers),
    line(widths.map((n) => '-'.repeat(n))),
    ...rows.map(line),
  ].join('\n');
}

function executorRows(execs: ExecutorSummary[]): string[][] {
  return execs.map((e) => [
    String(e.id),
    e.state,
    e.exitStatus === undefined ? '' : String(e.exitStatus),
    String(e.cores),
    mb(e.memory),
    e.workerHostPort,
    e.message ?? '',
  ]);
}

const EXEC_HEADERS = ['ID', 'State', 'Exit', 'Cores', 'Memory', 'Worker', 'Reason'];

function events(execs: ExecutorSummary[]): string {
  const rows = execs
    .flatMap((e) => e.history.map((h) => ({ e: e.id, ...h })))
    .sort((a, b) => a.time - b.time || a.e - b.e)
    .map((h) => [time(h.time), `executor ${h.e}`, h.state, h.message ?? '']);
  return table('Events', ['Time', 'Source', 'State', 'Message'], rows);
}

function describeApp(a: AppSummary, now: number): string {
  const failure = (
    a as {
      failure?: { message?: unknown; location?: { file: string; line: number; column: number } };
    }
  ).failure;
  const f = a.lastExecutorFailure;
  return [
    fields([
      ['Name', a.name],
      ['ID', a.id],
      ['State', a.state],
      ['Waiting Reason', a.waitingReason],
      ['User', a.user],
      ['Driver', `${a.driver.address}/${a.driver.name}`],
      ['Cores', `${a.coresGranted} granted${a.maxCores ? `, max ${a.maxCores}` : ', no maximum'}`],
      ['Cores per Executor', a.coresPerExecutor ?? 'all of a worker'],
      ['Memory per Executor', mb(a.memoryPerExecutorMB)],
      ['Start Time', time(a.startTime)],
      ['End Time', a.endTime === undefined ? undefined : time(a.endTime)],
      ['Duration', duration((a.endTime ?? now) - a.startTime)],
      [
        'Failure',
        failure && typeof failure.message === 'string'
          ? `${failure.message}${failure.location ? `\nat ${failure.location.file}:${failure.location.line}:${failure.location.column}` : ''}`
          : undefined,
      ],
      [
        'Last Executor Failure',
        f
          ? `executor ${f.execId} on ${f.workerHostPort} at ${time(f.time)}\n${f.message}`
          : undefined,
      ],
    ]),
    table('Executors', EXEC_HEADERS, executorRows(a.executors)),
    table('Removed Executors', EXEC_HEADERS, executorRows(a.removedExecutors)),
    events([...a.executors, ...a.removedExecutors]),
  ].join('\n\n');
}

function describeWorker(w: WorkerSummary, s: MasterState, now: number): string {
  const apps = [...s.activeApps, ...s.completedApps];
  return [
    fields([
      ['ID', w.id],
      ['Address', `${w.host}:${w.port}`],
      ['Web UI', w.webUiAddress],
      ['State', w.state],
      ['Cores', `${w.coresUsed} used of ${w.cores}`],
      ['Memory', `${mb(w.memoryUsed)} used of ${mb(w.memory)}`],
      ['Last Heartbeat', `${time(w.lastHeartbeat)} (${duration(now - w.lastHeartbeat)} ago)`],
    ]),
    table(
      'Executors',
      ['Application', 'Name', 'Executor'],
      w.executors.map((e) => [
        e.appId,
        apps.find((a) => a.id === e.appId)?.name ?? '',
        String(e.execId),
      ]),
    ),
    table(
      'Drivers',
      ['ID'],
      w.driverIds.map((d) => [d]),
    ),
  ].join('\n\n');
}

function describeDriver(d: DriverSummary): string {
  return fields([
    ['ID', d.id],
    ['State', d.state],
    ['Source', d.appPath],
    ['Worker', d.workerId ? `${d.workerId} (${d.workerHostPort ?? ''})` : '<none>'],
    ['Cores', d.cores],
    ['Memory', mb(d.mem)],
    ['Supervised', d.supervise ? 'yes' : 'no'],
    ['Submitted', time(d.submitDate)],
    ['Relaunch Of', d.relaunchedFrom],
    ['Exception', d.exception],
  ]);
}

function describeExecutor(e: ExecutorSummary, app: AppSummary | undefined): string {
  return [
    fields([
      ['Application', app ? `${app.name} (${e.appId})` : e.appId],
      ['Executor', e.id],
      ['State', e.state],
      ['Exit Status', e.exitStatus],
      ['Reason', e.message],
      ['Worker', `${e.workerId} (${e.workerHostPort})`],
      ['Cores', e.cores],
      ['Memory', mb(e.memory)],
    ]),
    events([e]),
  ].join('\n\n');
}

function describeMaster(s: MasterState): string {
  const alive = s.workers.filter((w) => w.state === 'ALIVE');
  return [
    fields([
      ['URL', s.url],
      ['Web UI', s.webUiUrl],
      ['Status', s.status],
      ['Workers', `${alive.length} alive of ${s.workers.length}`],
      [
        'Cores',
        `${alive.reduce((n, w) => n + w.coresUsed, 0)} used of ${alive.reduce((n, w) => n + w.cores, 0)}`,
      ],
      ['Applications', `${s.activeApps.length} active, ${s.completedApps.length} completed`],
      ['Drivers', `${s.activeDrivers.length} active, ${s.completedDrivers.length} completed`],
    ]),
    table(
      'Masters',
      ['URL', 'Status'],
      (s.masters ?? []).map((m) => [m.url, m.status]),
    ),
  ].join('\n\n');
}

/** The text for `t` in state `s`; says so when the master no longer knows it. */
export function describe(t: DescribeTarget, s: MasterState | undefined, now: number): string {
  if (!s) return 'Not connected to a master.\n';
  const gone = (what: string) => `${what} is not known to the master ${s.url} (any more).\n`;
  const apps = [...s.activeApps, ...s.completedApps];
  switch (t.kind) {
    case 'master':
      return `${describeMaster(s)}\n`;
    case 'worker': {
      const w = s.workers.find((x) => x.id === t.id);
      return w ? `${describeWorker(w, s, now)}\n` : gone(`Worker ${t.id}`);
    }
    case 'app': {
      const a = apps.find((x) => x.id === t.id);
      return a ? `${describeApp(a, now)}\n` : gone(`Application ${t.id}`);
    }
    case 'executor': {
      const a = apps.find((x) => x.id === t.appId);
      const e = a && [...a.executors, ...a.removedExecutors].find((x) => x.id === t.execId);
      return e ? `${describeExecutor(e, a)}\n` : gone(`Executor ${t.appId}/${t.execId}`);
    }
    case 'driver': {
      const d = [...s.activeDrivers, ...s.completedDrivers].find((x) => x.id === t.id);
      return d ? `${describeDriver(d)}\n` : gone(`Driver ${t.id}`);
    }
  }
}
