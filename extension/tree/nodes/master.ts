import { type Item, lower } from './item.js';
import type { Node } from './node.js';

type M = Extract<Node, { kind: 'master' }>;

export function masterItem(n: M): Item {
  const s = n.state;
  const alive = s.workers.filter((w) => w.state === 'ALIVE');
  const cores = alive.reduce((a, w) => a + w.cores, 0);
  const used = alive.reduce((a, w) => a + w.coresUsed, 0);
  return {
    id: 'master',
    label: s.url,
    description: `${s.status} · ${alive.length}/${s.workers.length} workers · ${used}/${cores} cores${n.connection.local ? ' · local' : ''}`,
    tooltip: `Master ${s.url}\nState: ${s.status}\nWeb UI: ${s.webUiUrl}\nWorkers alive: ${alive.length} of ${s.workers.length}\nCores used: ${used} of ${cores}`,
    icon:
      s.status === 'ALIVE'
        ? { id: 'server', color: 'charts.green' }
        : { id: 'server', color: 'charts.yellow' },
    contextValue: `wick.master.${lower(s.status)}${n.connection.local ? '.local' : ''}`,
    collapsible: 'expanded',
  };
}

export function masterChildren(n: M): Node[] {
  return n.state.workers.map((worker) => ({ kind: 'worker', worker }));
}
