/**
 * Show Failed Task: a failed application's error and stack in a read-only document
 * (`wick-failure:` URIs, one per application), from the failure node the tree or the command
 * gave; the user's line is a link in it, and Go to Source is a click on that link.
 */
import * as vscode from 'vscode';
import type { AppFailure } from '../../backend/protocol/common.js';
import { failureText } from './failureText.js';

export const failureScheme = 'wick-failure';

export class FailureDocuments implements vscode.TextDocumentContentProvider {
  private readonly texts = new Map<string, string>();

  async show(f: { appId: string; name: string; failure: AppFailure }): Promise<vscode.TextEditor> {
    this.texts.set(f.appId, failureText(f.name, f.appId, f.failure));
    const uri = vscode.Uri.from({
      scheme: failureScheme,
      path: `/Failed: ${f.name.replace(/[/\\]/g, '∕')} (${f.appId})`,
      query: `app=${f.appId}`,
    });
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.languages.setTextDocumentLanguage(doc, 'log');
    return vscode.window.showTextDocument(doc, { preview: false });
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    const app = new URLSearchParams(uri.query).get('app') ?? '';
    return (
      this.texts.get(app) ??
      '[This failure was shown in an earlier session of this window: open it again from the tree]\n'
    );
  }
}
