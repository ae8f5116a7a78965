import { type Item, lower, mb, stateIcon } from './item.js';
import type { Model, Node } from './node.js';

type W = Extract<Node, { kind: 'worker' }>;

export function workerItem(n: W): Item {
  const w = n.worker;
  const busy = w.executors.length + w.driverIds.length;
  return {
    id: `worker:${w.id}`,
    // Its address: a worker id (worker-<date>-<host>-<port>) is cut off in a side bar.
    label: `${w.host}:${w.port}`,
    description: `${w.state} · ${w.coresUsed}/${w.cores} cores · ${mb(w.memoryUsed)}/${mb(w.memory)}`,
    tooltip: `Worker ${w.id}\nAddress: ${w.host}:${w.port}\nState: ${w.state}\nCores: ${w.coresUsed} used of ${w.cores}\nMemory: ${mb(w.memoryUsed)} used of ${mb(w.memory)}\nWeb UI: ${w.webUiAddress}`,
    icon: stateIcon[w.state] ?? { id: 'vm' },
    contextValue: `wick.worker.${lower(w.state)}`,
    collapsible: busy > 0 ? 'collapsed' : 'none',
  };
}

/** The executors and drivers running on the worker. */
export function workerChildren(n: W, m: Model): Node[] {
  const s = m.state;
  if (!s) return [];
  const apps = [...s.activeApps, ...s.completedApps];
  const out: Node[] = [];
  for (const ref of n.worker.executors) {
    const app = apps.find((a) => a.id === ref.appId);
    const exec = app?.executors.find((e) => e.id === ref.execId);
    if (exec) out.push({ kind: 'executor', exec, app, under: 'worker' });
  }
  for (const id of n.worker.driverIds) {
    const driver = [...s.activeDrivers, ...s.completedDrivers].find((d) => d.id === id);
    if (driver) out.push({ kind: 'driver', driver, under: 'worker' });
  }
  return out;
}
