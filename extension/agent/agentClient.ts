/**
 * Starts `wick agent` through vscode-languageclient over stdio, as a plain JSON-RPC transport:
 * no document selector, only the custom messages of backend/agent/protocol.ts. The client
 * restarts the agent after a crash; `onReady` subscribers reconnect and the tree recovers.
 */
import * as vscode from 'vscode';
import {
  CloseAction,
  ErrorAction,
  LanguageClient,
  type LanguageClientOptions,
  type ServerOptions,
  TransportKind,
} from 'vscode-languageclient/node';

export function createAgentClient(
  context: vscode.ExtensionContext,
  output: vscode.LogOutputChannel,
): LanguageClient {
  const wick = context.asAbsolutePath('dist/wick.cjs');
  const run = {
    command: process.execPath,
    args: [wick, 'agent'],
    transport: TransportKind.stdio,
    options: {
      env: { ...process.env, ELECTRON_RUN_AS_NODE: '1', WICK_DIST: context.asAbsolutePath('dist') },
    },
  };
  const serverOptions: ServerOptions = { run, debug: run };
  let restarts = 0;
  const clientOptions: LanguageClientOptions = {
    documentSelector: [],
    outputChannel: output,
    traceOutputChannel: output,
    initializationFailedHandler: () => false,
    errorHandler: {
      error: () => ({ action: ErrorAction.Continue }),
      closed: () => {
        restarts++;
        if (restarts > 5) {
          void vscode.window.showErrorMessage(
            'The Wick agent crashed 5 times; it will not be restarted. See the "Wick" output.',
          );
          return { action: CloseAction.DoNotRestart };
        }
        output.appendLine(`The Wick agent stopped; restarting it (${restarts}).`);
        return { action: CloseAction.Restart };
      },
    },
  };
  return new LanguageClient('wick', 'Wick', serverOptions, clientOptions);
}
