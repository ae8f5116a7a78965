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
  const s = m.state;
  if (!s) return [];
  if (n.group === 'drivers')
    return [...s.activeDrivers, ...s.completedDrivers].map((driver) => ({
      kind: 'driver',
      driver,
      under: 'drivers',
    }));
  const apps =
    n.group === 'completed'
      ? [...s.completedApps].sort((a, b) => (b.endTime ?? 0) - (a.endTime ?? 0))
      : s.activeApps.filter((a) => (n.group === 'waiting') === (a.state === 'WAITING'));
  return apps.map((app) => ({ kind: 'app', app }));
}

/** The Applications view's roots. */
export function applicationGroups(m: Model): Node[] {
  const s = m.state;
  if (!s) return [];
  const waiting = s.activeApps.filter((a) => a.state === 'WAITING').length;
  const groups: Node[] = [
    { kind: 'group', group: 'running', count: s.activeApps.length - waiting },
    { kind: 'group', group: 'waiting', count: waiting },
    { kind: 'group', group: 'completed', count: s.completedApps.length },
  ];
  const drivers = s.activeDrivers.length + s.completedDrivers.length;
  if (drivers > 0) groups.push({ kind: 'group', group: 'drivers', count: drivers });
  return groups;
}
