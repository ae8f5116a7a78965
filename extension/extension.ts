import * as vscode from 'vscode';

/**
 * Activation wiring only. The cluster sidebar, logs and commands arrive with the extension issue;
 * until then the extension proves the build and the F5 loop work.
 */
export function activate(context: vscode.ExtensionContext): void {
  const version = String(context.extension.packageJSON.version ?? '');
  context.subscriptions.push(
    vscode.commands.registerCommand('wick.showVersion', () =>
      vscode.window.showInformationMessage(`Wick ${version}`),
    ),
  );
}

export function deactivate(): void {}
