/**
 * Which dashboard page shows a tree item, and whether a page is a past run's (a run of an earlier
 * local cluster, whose pages the agent reads from its event log: no master needed to open it).
 * Pure: no vscode import (test/extension/dashboard/dashboardRoute.test.ts).
 */
import type { Node } from '../tree/nodes/node.js';

/** The past run a dashboard route shows (`#/app/ID…` of one of `runs`), if it shows one. */
export function pastRunOfRoute(
  hash: string | undefined,
  runs: readonly { appId: string }[],
): string | undefined {
  const id = /^#\/app\/([^/?]+)/.exec(hash ?? '')?.[1];
  if (id === undefined) return undefined;
  let appId: string;
  try {
    appId = decodeURIComponent(id);
  } catch {
    return undefined;
  }
  return runs.some((r) => r.appId === appId) ? appId : undefined;
}

/** The dashboard route that shows a tree item (`#/app/ID`); undefined for items with no page. */
export function dashboardRoute(n: Node | undefined): string | undefined {
  switch (n?.kind) {
    case 'app':
      return `#/app/${encodeURIComponent(n.app.id)}`;
    // A run of an earlier local cluster: its pages from its event log (webview pastRunView.tsx).
    case 'run':
      return `#/app/${encodeURIComponent(n.run.appId)}`;
    case 'executor':
      return `#/app/${encodeURIComponent(n.exec.appId)}`;
    case 'worker':
      return `#/worker/${encodeURIComponent(n.worker.id)}`;
    case 'driver':
      return n.driver.workerId
        ? `#/log?driverId=${encodeURIComponent(n.driver.id)}&logType=stdout`
        : '#/drivers';
    case 'master':
      return '#/';
    case 'group':
      return n.group === 'drivers' ? '#/drivers' : '#/apps';
    case 'log':
      return 'driverId' in n.owner
        ? `#/log?driverId=${encodeURIComponent(n.owner.driverId)}&logType=${n.stream}`
        : `#/log?appId=${encodeURIComponent(n.owner.appId)}&executorId=${n.owner.execId}&logType=${n.stream}`;
    default:
      return undefined;
  }
}
