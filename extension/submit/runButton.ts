/**
 * The editor title's Run button shows only over a Wick application: a context key says whether
 * the active editor's file imports 'wick', updated when the editor changes or the file is saved.
 */
import * as vscode from 'vscode';
import { importsWick } from '../project/resolvesWick.js';

export const CONTEXT_KEY = 'wick.editorImportsWick';

export function registerRunButton(): vscode.Disposable[] {
  const update = () => {
    const doc = vscode.window.activeTextEditor?.document;
    const yes =
      doc !== undefined && /\.(m?js|ts)$/.test(doc.uri.path) && importsWick(doc.getText());
    void vscode.commands.executeCommand('setContext', CONTEXT_KEY, yes);
  };
  update();
  return [
    vscode.window.onDidChangeActiveTextEditor(update),
    vscode.workspace.onDidSaveTextDocument((doc) => {
      if (doc === vscode.window.activeTextEditor?.document) update();
    }),
  ];
}
