import type { Item } from './item.js';
import type { Node } from './node.js';

type L = Extract<Node, { kind: 'log' }>;

export function logId(owner: L['owner']): string {
  return 'driverId' in owner ? owner.driverId : `${owner.appId}/${owner.execId}`;
}

/** stdout / stderr of an executor or driver; clicking opens the live log document. */
export function logItem(n: L, parentId: string): Item {
  return {
    id: `${parentId}:${n.stream}`,
    label: n.stream,
    description: n.running ? 'live' : '',
    tooltip: `${n.stream} of ${logId(n.owner)}${n.running ? ' (follows as it is written)' : ''}`,
    icon: { id: n.stream === 'stdout' ? 'output' : 'warning' },
    contextValue: `wick.log.${n.stream}`,
    collapsible: 'none',
    command: {
      command: n.stream === 'stdout' ? 'wick.showStdout' : 'wick.showStderr',
      title: `Show ${n.stream}`,
      arguments: [n],
    },
  };
}
