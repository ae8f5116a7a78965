import type { Item } from './item.js';
import type { Node } from './node.js';

type M = Extract<Node, { kind: 'message' }>;

/** A failure or a status line in the tree, with an action when there is one ("Retry"). */
export function messageItem(n: M): Item {
  return {
    id: `message:${n.id}`,
    label: n.action ? `${n.text} — ${n.action.title}` : n.text,
    ...(n.detail ? { tooltip: n.detail } : {}),
    icon:
      n.severity === 'error'
        ? { id: 'error', color: 'errorForeground' }
        : n.severity === 'note'
          ? { id: 'info' }
          : { id: 'loading~spin' },
    contextValue: `wick.message.${n.severity}`,
    collapsible: 'none',
    ...(n.action ? { command: n.action } : {}),
  };
}
