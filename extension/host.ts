/**
 * The notifications and confirmations the commands show, behind one seam (the Kubernetes
 * extension's `Host` facade over vscode.window): in-host tests answer them the way a user would,
 * so "Show Logs" and "Kill?" run the same code as a click, without driving the workbench UI.
 */
import * as vscode from 'vscode';

export interface Host {
  showInformationMessage(message: string, ...items: string[]): Thenable<string | undefined>;
  showWarningMessage(
    message: string,
    options: vscode.MessageOptions,
    ...items: string[]
  ): Thenable<string | undefined>;
  showErrorMessage(message: string, ...items: string[]): Thenable<string | undefined>;
  /** vscode.window.withProgress: tests read a submit's phases (its titles and messages) here. */
  withProgress<R>(
    options: vscode.ProgressOptions,
    task: (
      progress: vscode.Progress<{ message?: string; increment?: number }>,
      token: vscode.CancellationToken,
    ) => Thenable<R>,
  ): Thenable<R>;
  /** vscode.env.openExternal: tests read the address Open Web UI hands the user's browser here. */
  openExternal(target: vscode.Uri): Thenable<boolean>;
  /** vscode.window.showQuickPick, for a command that must ask which item (Describe). */
  showQuickPick<T extends vscode.QuickPickItem>(
    items: readonly T[],
    options: vscode.QuickPickOptions,
  ): Thenable<T | undefined>;
}

/** The real window; tests replace its methods for a step and put them back. */
export function windowHost(): Host {
  return {
    showInformationMessage: (m, ...items) => vscode.window.showInformationMessage(m, ...items),
    showWarningMessage: (m, o, ...items) => vscode.window.showWarningMessage(m, o, ...items),
    showErrorMessage: (m, ...items) => vscode.window.showErrorMessage(m, ...items),
    withProgress: (options, task) => vscode.window.withProgress(options, task),
    openExternal: (target) => vscode.env.openExternal(target),
    showQuickPick: (items, options) => vscode.window.showQuickPick(items, options),
  };
}
