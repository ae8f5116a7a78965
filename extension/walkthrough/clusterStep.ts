/**
 * Ticks the walkthrough's "Start a local cluster" step once the cluster is up, however it was
 * started. VS Code creates its walkthrough service only when a Welcome page first opens, and a
 * step whose `onContext` expression is already true at that moment counts the event as seen and
 * is never ticked (VS Code 1.139's WalkthroughsService). So the key the step waits on,
 * `wick.walkthrough.clusterUp`, turns true only while a Welcome page is open (the service then
 * exists and sees the change), and follows the connection from then on.
 */
import * as vscode from 'vscode';
import type { Session } from '../session.js';

const KEY = 'wick.walkthrough.clusterUp';

/** A Welcome or walkthrough tab: VS Code gives its input no API type, so its label says. */
function welcomeOpen(): boolean {
  return vscode.window.tabGroups.all.some((g) =>
    g.tabs.some((t) => t.input === undefined && /^(Welcome|Walkthrough\b)/.test(t.label)),
  );
}

export function registerClusterStep(session: Session): vscode.Disposable[] {
  let seenWelcome = false;
  let last: boolean | undefined;
  const update = () => {
    seenWelcome ||= welcomeOpen();
    const up = seenWelcome && session.connection.kind === 'connected';
    if (up === last) return;
    last = up;
    void vscode.commands.executeCommand('setContext', KEY, up);
  };
  update();
  return [vscode.window.tabGroups.onDidChangeTabs(update), session.onDidChange(update)];
}
