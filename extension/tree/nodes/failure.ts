import type { Item } from './item.js';
import type { Node } from './node.js';

type F = Extract<Node, { kind: 'failure' }>;

/** Why an application failed, first among its rows: clicking opens the error with its stack. */
export function failureItem(n: F): Item {
  const f = n.failure;
  const first = f.message.split('\n')[0] ?? f.message;
  const task = f.task ? `task of stage ${f.task.stageId}, partition ${f.task.partitionId}` : '';
  const at = f.location ? `${f.location.file}:${f.location.line}:${f.location.column}` : '';
  return {
    id: `failure:${n.appId}`,
    label: first,
    description: [task, at.split('/').pop()].filter(Boolean).join(' · '),
    tooltip: [
      `${n.name} (${n.appId}) failed`,
      f.message,
      at && `at ${at}`,
      'Click: the error and its stack',
    ]
      .filter(Boolean)
      .join('\n'),
    icon: { id: 'error', color: 'errorForeground' },
    contextValue: f.task && f.location ? 'wick.failure.task' : 'wick.failure',
    collapsible: 'none',
    command: { command: 'wick.showFailedTask', title: 'Show Failed Task', arguments: [n] },
  };
}
