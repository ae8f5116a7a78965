import { type Item, lower } from './item.js';
import type { Node } from './node.js';

type P = Extract<Node, { kind: 'peer' }>;

/**
 * Another master of the cluster (recovery mode ZOOKEEPER), beside the one Wick is connected to:
 * its URL and state, from the `masters` list that the connected master keeps.
 */
export function peerItem(n: P): Item {
  const { url, status } = n.master;
  return {
    id: `peer:${url}`,
    label: url,
    description: status,
    tooltip: `Master ${url}\nState: ${status}`,
    icon:
      status === 'ALIVE'
        ? { id: 'server', color: 'charts.green' }
        : { id: 'server', color: 'charts.yellow' },
    contextValue: `wick.peer.${lower(status)}`,
    collapsible: 'none',
  };
}
