import { appOf } from '../../logs/knownDrivers.js';
import { driverWaitingReason } from '../../submit/waitingReasons.js';
import { cores, type Item, lower, mb, stateIcon } from './item.js';
import type { Model, Node } from './node.js';

type D = Extract<Node, { kind: 'driver' }>;

export function driverItem(n: D, m: Model): Item {
  const d = n.driver;
  const why = m.state ? driverWaitingReason(d, m.state) : undefined;
  const file = d.appPath.split('/').pop() ?? d.appPath;
  // Its application's name when this window submitted it (the state does not link the two).
  const appId = appOf(d.id);
  const s = m.state;
  const app =
    appId && s ? [...s.activeApps, ...s.completedApps].find((a) => a.id === appId) : undefined;
  return {
    id: `driver:${n.under}:${d.id}`,
    label: app ? `${app.name} · ${file}` : file,
    description: `${d.state}${why ? `: ${why}` : ''} · ${cores(d.cores)} · ${d.id}`,
    tooltip: `Driver ${d.id}${app ? ` of ${app.name} (${app.id})` : ''}\nSource: ${d.appPath}\nState: ${d.state}${why ? ` — ${why}` : ''}\nWorker: ${d.workerId ?? '—'}\nCores: ${d.cores} · Memory: ${mb(d.mem)}\nSupervised: ${d.supervise ? 'yes' : 'no'}${d.exception ? `\n${d.exception}` : ''}`,
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
