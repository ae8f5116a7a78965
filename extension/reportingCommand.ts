import * as vscode from 'vscode';
import type { Host } from './host.js';

/**
 * How every Wick command is registered: a command that fails shows its error as a notification
 * ("Wick: …"), never a silent no-op or an unhandled rejection in the extension host's log.
 */
export function reportingCommand(
  host: Pick<Host, 'showErrorMessage'>,
): (id: string, fn: (...args: never[]) => unknown) => vscode.Disposable {
  return (id, fn) =>
    vscode.commands.registerCommand(id, async (...args: never[]) => {
      try {
        return await fn(...args);
      } catch (err) {
        void host.showErrorMessage(`Wick: ${(err as Error).message}`);
        return undefined;
      }
    });
}
