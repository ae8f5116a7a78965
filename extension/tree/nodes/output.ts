import type { Item } from './item.js';
import type { Node } from './node.js';

type O = Extract<Node, { kind: 'output' }>;

/** The driver's stdout and stderr of an app submitted from this window; opens its document. */
export function outputItem(n: O): Item {
  return {
    id: `output:${n.appId}`,
    label: 'driver output',
    tooltip: `What the driver of ${n.appId} wrote (stdout and stderr), kept after it ended`,
    icon: { id: 'terminal' },
    contextValue: 'wick.output',
    collapsible: 'none',
    command: { command: 'wick.showDriverOutput', title: 'Show Driver Output', arguments: [n] },
  };
}
