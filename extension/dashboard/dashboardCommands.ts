/**
 * The dashboard's commands besides Open Dashboard: a tree item's page in the panel, and the web
 * UIs of the master, a worker and an application, in the Simple Browser or the system's browser
 * (wick.ui.openWebUiIn). With cluster authentication on, the master's and workers' UIs answer
 * 401 without a login, so the address opened is a one-time login link the agent makes.
 */
import * as vscode from 'vscode';
import { RequestUiLink, type UiTarget } from '../../backend/agent/protocol.js';
import type { Host } from '../host.js';
import { reportingCommand } from '../reportingCommand.js';
import type { Session } from '../session.js';
import type { Node } from '../tree/nodes/node.js';
import type { DashboardPanel } from './dashboardPanel.js';

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

export interface OpenedUi {
  url: string;
  via: 'simpleBrowser' | 'external';
  login: boolean;
}

export function registerDashboardCommands(d: {
  session: Session;
  openDashboard: (hash?: string) => DashboardPanel;
  host: Host;
}): vscode.Disposable[] {
  const cmd = reportingCommand(d.host);
  return [
    cmd('wick.openInDashboard', (node?: Node) => {
      const hash = dashboardRoute(node);
      if (!hash)
        throw new Error(
          'Select an application, a past run, an executor, a worker or a driver to open its page',
        );
      return d.openDashboard(hash);
    }),
    cmd('wick.openWebUi', (node?: Node) => openWebUi(d.session, d.host, node)),
  ];
}

async function openWebUi(session: Session, host: Host, node?: Node): Promise<OpenedUi> {
  await session.ensureConnected();
  // An application's page is the master's dashboard on its route (after the login, if any).
  const target: UiTarget =
    node?.kind === 'worker'
      ? { kind: 'worker', workerId: node.worker.id }
      : node?.kind === 'app'
        ? { kind: 'app', appId: node.app.id }
        : { kind: 'master' };
  const link = await session.client.sendRequest(RequestUiLink, target);
  // The address is on the agent's machine: in a browser or remote VS Code (code-server,
  // Codespaces, Remote-SSH) the user's browser reaches it only through VS Code's port
  // forwarding, which asExternalUri sets up (on a desktop VS Code it is the same address).
  const url = (await vscode.env.asExternalUri(vscode.Uri.parse(link.url, true))).toString(true);
  const via =
    vscode.workspace.getConfiguration('wick').get<string>('ui.openWebUiIn', 'external') ===
    'simpleBrowser'
      ? 'simpleBrowser'
      : 'external';
  if (via === 'simpleBrowser') await vscode.commands.executeCommand('simpleBrowser.show', url);
  else await host.openExternal(vscode.Uri.parse(url, true));
  return { url, via, login: link.login };
}
