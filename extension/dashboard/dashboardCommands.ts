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
import { dashboardRoute } from './dashboardRoute.js';

export { dashboardRoute, pastRunOfRoute } from './dashboardRoute.js';

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
