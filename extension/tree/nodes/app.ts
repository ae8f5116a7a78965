import { duration, type Item, lower, mb, stateIcon } from './item.js';
import type { Model, Node } from './node.js';

type A = Extract<Node, { kind: 'app' }>;

export function appItem(n: A, m: Model): Item {
  const a = n.app;
  const running = a.executors.filter((e) => e.state === 'RUNNING').length;
  const took = duration((a.endTime ?? m.now) - a.startTime);
  const why = a.state === 'WAITING' ? (a.waitingReason ?? 'waiting for resources') : undefined;
  const tooltip = [
    `${a.name} (${a.id})`,
    `State: ${a.state}${why ? ` — ${why}` : ''}`,
    `User: ${a.user}`,
    `Cores: ${a.coresGranted}${a.maxCores ? ` of max ${a.maxCores}` : ''}`,
    `Memory per executor: ${mb(a.memoryPerExecutorMB)}`,
    `Executors: ${running} running, ${a.removedExecutors.length} ended`,
    `Duration: ${took}`,
  ].join('\n');
  return {
    id: `app:${a.id}`,
    label: a.name,
    description: why
      ? `${a.id} · WAITING: ${why}`
      : `${a.id} · ${a.state} · ${a.coresGranted} cores · ${took}`,
    tooltip,
    icon: stateIcon[a.state] ?? { id: 'circle-outline' },
    contextValue: `wick.app.${lower(a.state)}`,
    collapsible: 'collapsed',
  };
}

export function appChildren(n: A): Node[] {
  const a = n.app;
  return [...a.executors, ...a.removedExecutors]
    .sort((x, y) => x.id - y.id)
    .map((exec) => ({ kind: 'executor', exec, app: a, under: 'app' }));
}
