import { Registry } from 'prom-client';
import { DriverStates, ExecutorStates, RecoveryStates } from '../../protocol/common.js';
import type { MessageOf } from '../../protocol/registry.js';
import type { MasterStateResponse } from '../../protocol/state.js';
import type { ConnectionStats } from '../../rpc/index.js';
import { type AppMetrics, type AppMetricsSource, applicationMetricDefs } from './appMetrics.js';
import { countBy, gauge, type MetricDef, perScrape, registerMetrics } from './define.js';
import { rpcMetricDefs } from './rpcMetrics.js';

type State = MessageOf<typeof MasterStateResponse>;

/** What one scrape of the master reads. */
export interface MasterSnapshot {
  /** The master's state, as the web UI's subscription mirrors it. */
  state: State;
  /** The master's RpcEnv's connections; absent before the web UI joined it. */
  rpc: ConnectionStats | undefined;
  apps: readonly AppMetrics[];
}

type S = MasterSnapshot;

/** Spark's MasterSource (workers, aliveWorkers, apps, waitingApps) and Wick's own. */
export const masterMetricDefs: MetricDef<S>[] = [
  ...gauge<S>(
    'master',
    'workers',
    {
      help: 'Workers the master knows, DEAD ones too until it forgets them',
      spark: 'master.workers',
      sameAsSpark: true,
    },
    ({ state }) => state.workers.length,
  ),
  ...gauge<S>(
    'master',
    'aliveWorkers',
    { help: 'Workers ALIVE', spark: 'master.aliveWorkers', sameAsSpark: true },
    ({ state }) => state.workers.filter((w) => w.state === 'ALIVE').length,
  ),
  ...gauge<S>(
    'master',
    'apps',
    {
      help: 'Active applications (WAITING or RUNNING)',
      spark: 'master.apps',
      sameAsSpark: true,
    },
    ({ state }) => state.activeApps.length,
  ),
  ...gauge<S>(
    'master',
    'waitingApps',
    {
      help: 'Active applications WAITING for executors (Spark counts every active one still in its queue)',
      spark: 'master.waitingApps',
      sameAsSpark: true,
    },
    ({ state }) => state.activeApps.filter((a) => a.state === 'WAITING').length,
  ),
  ...gauge<S>(
    'master',
    'completedApps',
    { help: 'Completed applications the master retains (wick.deploy.retainedApplications)' },
    ({ state }) => state.completedApps.length,
  ),
  ...gauge<S>(
    'master',
    'drivers',
    {
      help: 'Cluster-mode drivers by state: the active ones, and the completed ones the master retains (wick.deploy.retainedDrivers)',
      labels: ['state'],
    },
    ({ state }) =>
      countBy(
        [...state.activeDrivers, ...state.completedDrivers],
        'state',
        DriverStates,
        (d) => d.state,
      ),
  ),
  ...gauge<S>(
    'master',
    'executors',
    { help: 'Executors of the active applications, by state', labels: ['state'] },
    ({ state }) =>
      countBy(
        state.activeApps.flatMap((a) => a.executors),
        'state',
        ExecutorStates,
        (e) => e.state,
      ),
  ),
  ...gauge<S>('master', 'cores', { help: 'Cores of the ALIVE workers' }, ({ state }) =>
    sumAlive(state, (w) => w.cores),
  ),
  ...gauge<S>(
    'master',
    'coresUsed',
    { help: 'Cores of the ALIVE workers in use by executors and drivers' },
    ({ state }) => sumAlive(state, (w) => w.coresUsed),
  ),
  ...gauge<S>('master', 'mem_MB', { help: 'Memory of the ALIVE workers, in MiB' }, ({ state }) =>
    sumAlive(state, (w) => w.memory),
  ),
  ...gauge<S>(
    'master',
    'memUsed_MB',
    { help: 'Memory of the ALIVE workers in use by executors and drivers, in MiB' },
    ({ state }) => sumAlive(state, (w) => w.memoryUsed),
  ),
  ...gauge<S>(
    'master',
    'status',
    {
      help: "1 for the master's recovery state (ALIVE: the leader), 0 for the others",
      labels: ['status'],
    },
    ({ state }) =>
      RecoveryStates.map((s) => ({ labels: { status: s }, value: s === state.status ? 1 : 0 })),
  ),
  ...rpcMetricDefs<S>('master', (s) => s.rpc),
  ...applicationMetricDefs,
];

function sumAlive(state: State, of: (w: State['workers'][number]) => number): number {
  let n = 0;
  for (const w of state.workers) if (w.state === 'ALIVE') n += of(w);
  return n;
}

export interface MasterMetricsInputs {
  /** The master's state now; undefined while the web UI has not had its first snapshot. */
  state: () => State | undefined;
  rpc: () => ConnectionStats | undefined;
  apps: () => AppMetricsSource;
}

/** A registry of this master's metrics, of its own (never prom-client's global one). */
export function masterMetricsRegistry(inputs: MasterMetricsInputs): Registry {
  const registry = new Registry();
  registerMetrics(
    registry,
    masterMetricDefs,
    perScrape(async () => {
      const state = inputs.state();
      if (!state) return undefined;
      return { state, rpc: inputs.rpc(), apps: [...inputs.apps().apps()] };
    }),
  );
  return registry;
}
