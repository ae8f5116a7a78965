import type { Item } from './item.js';
import type { Model, Node } from './node.js';

type G = Extract<Node, { kind: 'group' }>;

const labels = {
  running: 'Running',
  waiting: 'Waiting',
  completed: 'Completed',
  drivers: 'Drivers',
};
const icons = { running: 'play-circle', waiting: 'watch', completed: 'history', drivers: 'rocket' };

export function groupItem(n: G): Item {
  return {
    // VS Code keeps a known id's collapsible state across refreshes: an empty group (no chevron)
    // that kept its id would stay shut once it had apps. A new id when it fills shows it open.
    id: `group:${n.group}${n.count === 0 ? ':empty' : ''}`,
    label: labels[n.group],
    description: String(n.count),
    icon: { id: icons[n.group] },
    contextValue: `wick.group.${n.group}`,
    collapsible:
      n.count === 0
        ? 'none'
        : n.group === 'completed' || n.group === 'drivers'
          ? 'collapsed'
          : 'expanded',
  };
}

export function groupChildren(n: G, m: Model): Node[] {
  const v = visible(m);
  if (!v) return [];
  if (n.group === 'drivers')
    return v.drivers.map((driver) => ({ kind: 'driver', driver, under: 'drivers' }));
  const apps =
    n.group === 'completed'
      ? [...v.completed].sort((a, b) => (b.endTime ?? 0) - (a.endTime ?? 0))
      : v.active.filter((a) => (n.group === 'waiting') === (a.state === 'WAITING'));
  const live: Node[] = apps.map((app) => ({ kind: 'app', app }));
  // The runs of earlier sessions after this cluster's own, newest first.
  return n.group === 'completed'
    ? [...live, ...v.past.map((run): Node => ({ kind: 'run', run }))]
    : live;
}

/** The Applications view's roots. */
export function applicationGroups(m: Model): Node[] {
  const v = visible(m);
  if (!v) return [];
  const waiting = v.active.filter((a) => a.state === 'WAITING').length;
  const groups: Node[] = [
    { kind: 'group', group: 'running', count: v.active.length - waiting },
    { kind: 'group', group: 'waiting', count: waiting },
    { kind: 'group', group: 'completed', count: v.completed.length + v.past.length },
  ];
  if (v.drivers.length > 0)
    groups.push({ kind: 'group', group: 'drivers', count: v.drivers.length });
  return groups;
}

/** The apps and drivers the view shows: the state's, less what its filter leaves out. */
function visible(m: Model) {
  const s = m.state;
  if (!s) return undefined;
  const states = m.filter?.states;
  const cleared = m.filter?.cleared;
  const shown = (a: { id: string; state: string }) =>
    (!states || states.includes(a.state)) && !cleared?.has(a.id);
  const live = new Set([...s.activeApps, ...s.completedApps].map((a) => a.id));
  return {
    active: s.activeApps.filter(shown),
    completed: s.completedApps.filter(shown),
    past: (m.pastRuns ?? []).filter(
      (r) => shown({ id: r.appId, state: r.state }) && !live.has(r.appId),
    ),
    drivers: [...s.activeDrivers, ...s.completedDrivers.filter((d) => !cleared?.has(d.id))],
  };
}
