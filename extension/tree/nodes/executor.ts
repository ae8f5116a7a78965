import { cores, endedNormally, type Item, lower, mb, normalEndIconOf, stateIcon } from './item.js';
import type { Node } from './node.js';

type E = Extract<Node, { kind: 'executor' }>;

export function executorItem(n: E): Item {
  const e = n.exec;
  const exit = e.exitStatus !== undefined ? ` · exit ${e.exitStatus}` : '';
  return {
    id: `executor:${n.under}:${e.appId}/${e.id}`,
    label:
      n.under === 'worker' ? `${n.app?.name ?? e.appId} · executor ${e.id}` : `executor ${e.id}`,
    description: `${e.state}${exit} · ${cores(e.cores)} · ${n.under === 'worker' ? e.appId : e.workerHostPort}`,
    tooltip: `Executor ${e.id} of ${e.appId}\nWorker: ${e.workerId} (${e.workerHostPort})\nState: ${e.state}${exit}\nCores: ${e.cores} · Memory: ${mb(e.memory)}${e.message ? `\n${e.message}` : ''}`,
    icon: endedNormally(e.state, n.app?.state)
      ? normalEndIconOf(n.app?.state)
      : (stateIcon[e.state] ?? { id: 'circle-outline' }),
    contextValue: `wick.executor.${lower(e.state)}`,
    collapsible: 'collapsed',
  };
}

export function executorChildren(n: E): Node[] {
  const owner = { appId: n.exec.appId, execId: n.exec.id };
  const running = n.exec.state === 'RUNNING' || n.exec.state === 'LAUNCHING';
  return (['stdout', 'stderr'] as const).map((stream) => ({ kind: 'log', stream, owner, running }));
}
