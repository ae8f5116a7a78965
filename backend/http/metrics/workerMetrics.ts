import { Registry } from 'prom-client';
import type { MessageOf } from '../../protocol/registry.js';
import type { WorkerStateResponse } from '../../protocol/worker.js';
import type { ConnectionStats } from '../../rpc/index.js';
import { gauge, type MetricDef, perScrape, registerMetrics } from './define.js';
import { rpcMetricDefs } from './rpcMetrics.js';

type State = MessageOf<typeof WorkerStateResponse>;

/** What one scrape of a worker reads. */
export interface WorkerSnapshot {
  /** The worker's state, as its endpoint answers RequestWorkerState. */
  state: State;
  rpc: ConnectionStats | undefined;
  /** Whether it follows a master now (registered, not between masters). */
  registered: boolean;
}

type S = WorkerSnapshot;

/** Spark's WorkerSource (executors, coresUsed, memUsed_MB, coresFree, memFree_MB) and Wick's own. */
export const workerMetricDefs: MetricDef<S>[] = [
  ...gauge<S>(
    'worker',
    'executors',
    { help: 'Executors running on this worker', spark: 'worker.executors', sameAsSpark: true },
    ({ state }) => state.executors.length,
  ),
  ...gauge<S>(
    'worker',
    'coresUsed',
    {
      help: 'Cores in use by its executors and drivers',
      spark: 'worker.coresUsed',
      sameAsSpark: true,
    },
    ({ state }) => state.coresUsed,
  ),
  ...gauge<S>(
    'worker',
    'memUsed_MB',
    {
      help: 'Memory in use by its executors and drivers, in MiB',
      spark: 'worker.memUsed_MB',
      sameAsSpark: true,
    },
    ({ state }) => state.memoryUsed,
  ),
  ...gauge<S>(
    'worker',
    'coresFree',
    { help: 'Cores free', spark: 'worker.coresFree', sameAsSpark: true },
    ({ state }) => Math.max(0, state.cores - state.coresUsed),
  ),
  ...gauge<S>(
    'worker',
    'memFree_MB',
    { help: 'Memory free, in MiB', spark: 'worker.memFree_MB', sameAsSpark: true },
    ({ state }) => Math.max(0, state.memory - state.memoryUsed),
  ),
  ...gauge<S>(
    'worker',
    'cores',
    { help: 'Cores this worker offers (wick.worker.cores)' },
    ({ state }) => state.cores,
  ),
  ...gauge<S>(
    'worker',
    'mem_MB',
    { help: 'Memory this worker offers, in MiB (wick.worker.memory)' },
    ({ state }) => state.memory,
  ),
  ...gauge<S>(
    'worker',
    'drivers',
    { help: 'Cluster-mode drivers running on this worker' },
    ({ state }) => state.drivers.length,
  ),
  ...gauge<S>(
    'worker',
    'registered',
    { help: '1 while the worker is registered with a master, 0 while it looks for one' },
    ({ registered }) => (registered ? 1 : 0),
  ),
  ...gauge<S>('worker', 'logFollows', { help: 'Logs followed for clients now' }, ({ state }) =>
    state.logFollows === undefined ? [] : [{ value: state.logFollows }],
  ),
  ...rpcMetricDefs<S>('worker', (s) => s.rpc),
];

export interface WorkerMetricsInputs {
  /** The worker's state now; undefined before its web UI is attached to it. */
  state: () => Promise<State | undefined>;
  rpc: () => ConnectionStats | undefined;
  registered: () => boolean;
}

/** A registry of this worker's metrics, of its own (never prom-client's global one). */
export function workerMetricsRegistry(inputs: WorkerMetricsInputs): Registry {
  const registry = new Registry();
  registerMetrics(
    registry,
    workerMetricDefs,
    perScrape(async () => {
      const state = await inputs.state();
      if (!state) return undefined;
      return { state, rpc: inputs.rpc(), registered: inputs.registered() };
    }),
  );
  return registry;
}
