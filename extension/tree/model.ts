/**
 * The state → tree mapping: roots, children and items of both views, from the agent's pushed
 * model. Pure: no vscode import, so test/extension/tree.test.ts exercises it directly.
 */
import { assertNever } from '../../backend/shared/assertNever.js';
import { appChildren, appItem } from './nodes/app.js';
import { driverChildren, driverItem } from './nodes/driver.js';
import { executorChildren, executorItem } from './nodes/executor.js';
import { failureItem } from './nodes/failure.js';
import { applicationGroups, groupChildren, groupItem } from './nodes/group.js';
import type { Item } from './nodes/item.js';
import { jobChildren, jobItem, stageItem } from './nodes/job.js';
import { logItem } from './nodes/log.js';
import { masterChildren, masterItem } from './nodes/master.js';
import { messageItem } from './nodes/message.js';
import type { Model, Node } from './nodes/node.js';
import { outputItem } from './nodes/output.js';
import { peerItem } from './nodes/peer.js';
import { fileItem, runChildren, runItem } from './nodes/run.js';
import { workerChildren, workerItem } from './nodes/worker.js';

export type { Model, Node };
export type ViewId = 'cluster' | 'applications';

/** An empty list (the welcome view) when disconnected; a message node for progress and errors. */
export function roots(view: ViewId, m: Model): Node[] {
  const c = m.connection;
  if (c.kind === 'disconnected') return [];
  if (c.kind === 'connecting')
    return view === 'cluster'
      ? [{ kind: 'message', id: 'connecting', text: c.message, severity: 'info' }]
      : [];
  if (c.kind === 'error')
    return [
      {
        kind: 'message',
        id: 'error',
        text: `Cannot reach ${c.target === 'local' ? 'the local cluster' : c.target}: ${firstLine(c.message)}`,
        detail: c.message,
        severity: 'error',
        action: { command: 'wick.refresh', title: 'Retry' },
      },
    ];
  if (!m.state) return [];
  if (view === 'applications') return applicationGroups(m);
  // The connected master first, with its workers; then every other master with its state.
  const url = m.state.url;
  const peers: Node[] = (m.state.masters ?? [])
    .filter((p) => p.url !== url)
    .map((master) => ({ kind: 'peer', master }));
  return [{ kind: 'master', state: m.state, connection: c }, ...peers];
}

export function children(n: Node, m: Model): Node[] {
  switch (n.kind) {
    case 'master':
      return masterChildren(n);
    case 'worker':
      return workerChildren(n, m);
    case 'group':
      return groupChildren(n, m);
    case 'app':
      return appChildren(n, m);
    case 'executor':
      return executorChildren(n);
    case 'driver':
      return driverChildren(n);
    case 'job':
      return jobChildren(n);
    case 'run':
      return runChildren(n);
    case 'message':
    case 'peer':
    case 'log':
    case 'output':
    case 'stage':
    case 'failure':
    case 'file':
      return [];
    default:
      return assertNever(n, 'node');
  }
}

export function item(n: Node, m: Model, parentId = ''): Item {
  switch (n.kind) {
    case 'message':
      return messageItem(n);
    case 'master':
      return masterItem(n);
    case 'peer':
      return peerItem(n);
    case 'worker':
      return workerItem(n);
    case 'group':
      return groupItem(n);
    case 'app':
      return appItem(n, m);
    case 'executor':
      return executorItem(n);
    case 'driver':
      return driverItem(n, m);
    case 'log':
      return logItem(n, parentId);
    case 'output':
      return outputItem(n);
    case 'job':
      return jobItem(n, m);
    case 'stage':
      return stageItem(n, m);
    case 'failure':
      return failureItem(n);
    case 'run':
      return runItem(n);
    case 'file':
      return fileItem(n, parentId);
    default:
      return assertNever(n, 'node');
  }
}

/** The node that shows application `appId` in the Applications view, with its parent group. */
export function findApp(appId: string, m: Model): { node: Node; parent: Node } | undefined {
  for (const g of applicationGroups(m)) {
    for (const a of groupChildren(g as Extract<Node, { kind: 'group' }>, m))
      if (a.kind === 'app' && a.app.id === appId) return { node: a, parent: g };
  }
  return undefined;
}

function firstLine(s: string): string {
  return s.split('\n')[0] ?? s;
}
