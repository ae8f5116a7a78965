import { driverWaitingReason } from '../../submit/waitingReasons.js';
import { type Item, lower, mb, stateIcon } from './item.js';
import type { Model, Node } from './node.js';

type D = Extract<Node, { kind: 'driver' }>;

export function driverItem(n: D, m: Model): Item {
  const d = n.driver;
  const why = m.state ? driverWaitingReason(d, m.state) : undefined;
  const file = d.appPath.split('/').pop() ?? d.appPath;
  return {
    id: `driver:${n.under}:${d.id}`,
    label: d.id,
    description: `${file} · ${d.state}${why ? `: ${why}` : ''}${d.workerHostPort ? ` · ${d.workerHostPort}` : ''}`,
    tooltip: `Driver ${d.id}\nApp: ${d.appPath}\nState: ${d.state}${why ? ` — ${why}` : ''}\nWorker: ${d.workerId ?? '—'}\nCores: ${d.cores} · Memory: ${mb(d.mem)}\nSupervised: ${d.supervise ? 'yes' : 'no'}${d.exception ? `\n${d.exception}` : ''}`,
    icon: stateIcon[d.state] ?? { id: 'rocket' },
    contextValue: `wick.driver.${lower(d.state)}`,
    collapsible: d.workerId ? 'collapsed' : 'none',
  };
}

export function driverChildren(n: D): Node[] {
  if (!n.driver.workerId) return [];
  const owner = { driverId: n.driver.id };
  const running = ['RUNNING', 'SUBMITTED', 'RELAUNCHING'].includes(n.driver.state);
  return (['stdout', 'stderr'] as const).map((stream) => ({ kind: 'log', stream, owner, running }));
}
