/**
 * After a submit: if the application (or its cluster-mode driver) waits for something no worker
 * alive has, say so at once, in a notification naming what to change, instead of leaving a row
 * that waits for good. Watches pushed state until the app runs or ends.
 */
import * as vscode from 'vscode';
import type { MasterState } from '../../backend/agent/protocol.js';
import type { Host } from '../host.js';
import type { Session } from '../session.js';
import { type Watched, waitingNews } from './waitingReasons.js';

export const OPEN_SETTINGS = 'Open Settings';
export const KILL = 'Kill';

export function watchWaiting(d: { session: Session; host: Host }, w: Watched): vscode.Disposable {
  let sub: vscode.Disposable | undefined;
  const check = (s: MasterState | undefined): boolean => {
    const news = waitingNews(w, s);
    if (news === undefined) return false;
    if (news !== 'done') void tell(d, w, news);
    return true;
  };
  if (!check(d.session.state))
    sub = d.session.onDidPush((m) => {
      if (check(m.state)) sub?.dispose();
    });
  return { dispose: () => sub?.dispose() };
}

async function tell(d: { host: Host }, w: Watched, news: string): Promise<void> {
  const choice = await d.host.showWarningMessage(news, {}, OPEN_SETTINGS, KILL);
  if (choice === OPEN_SETTINGS)
    await vscode.commands.executeCommand('workbench.action.openSettings', 'wick.submit');
  else if (choice === KILL) {
    const id = w.appId ?? w.driverId;
    const node = w.appId ? { kind: 'app', app: { id } } : { kind: 'driver', driver: { id } };
    await vscode.commands.executeCommand(
      w.appId ? 'wick.killApplication' : 'wick.killDriver',
      node,
    );
  }
}
