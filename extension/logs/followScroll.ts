/**
 * `tail -f` in the editor: a followed log (wick-log: and wick-merged: documents) opens at its end,
 * and while an editor of it has the cursor at the end, the editor moves with the end as lines
 * arrive. Scrolling up or moving the cursor off the end stops that; going back to the end (the
 * cursor there, the end in view) starts it again. Search and folding stay the user's.
 */
import * as vscode from 'vscode';
import { FollowState } from './followState.js';

export class FollowScroll implements vscode.Disposable {
  private readonly states = new WeakMap<vscode.TextEditor, FollowState>();
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly schemes: string[]) {
    this.disposables.push(
      vscode.workspace.onDidChangeTextDocument((e) => this.changed(e.document, e.contentChanges)),
      vscode.window.onDidChangeVisibleTextEditors((eds) => this.shown(eds)),
      vscode.window.onDidChangeTextEditorVisibleRanges((e) => {
        const st = this.states.get(e.textEditor);
        const first = e.visibleRanges[0];
        const last = e.visibleRanges[e.visibleRanges.length - 1];
        if (!st || !first || !last) return;
        const doc = e.textEditor.document;
        const back = st.viewed(
          first.start.line,
          last.end.line,
          doc.lineCount - 1,
          e.textEditor.selection.active.line,
        );
        if (back !== undefined)
          e.textEditor.revealRange(
            new vscode.Range(back, 0, back, 0),
            vscode.TextEditorRevealType.AtTop,
          );
      }),
      vscode.window.onDidChangeTextEditorSelection((e) => {
        const st = this.states.get(e.textEditor);
        // kind is undefined for programmatic changes: the follow's own, and an edit's.
        if (!st || e.kind === undefined) return;
        st.moved(e.selections[0]?.active.line ?? 0, e.textEditor.document.lineCount - 1);
      }),
    );
    this.shown(vscode.window.visibleTextEditors);
  }

  /** Whether `ed` follows its log's end now (tests). */
  follows(ed: vscode.TextEditor): boolean | undefined {
    return this.states.get(ed)?.following;
  }

  private ours(d: vscode.TextDocument): boolean {
    return this.schemes.includes(d.uri.scheme);
  }

  /** A log that comes into view for the first time in its editor opens at its end. */
  private shown(editors: readonly vscode.TextEditor[]): void {
    for (const ed of editors) {
      if (!this.ours(ed.document) || this.states.has(ed)) continue;
      const st = new FollowState();
      this.states.set(ed, st);
      toEnd(ed, st);
    }
  }

  private changed(
    doc: vscode.TextDocument,
    changes: readonly vscode.TextDocumentContentChangeEvent[],
  ): void {
    if (!this.ours(doc)) return;
    for (const ed of vscode.window.visibleTextEditors) {
      const st = this.states.get(ed);
      if (ed.document !== doc || !st) continue;
      const cursor = ed.selection.active;
      const displaced = changes.some(
        (c) => c.range.start.isEqual(cursor) && c.range.start.line < (st.endLine ?? 0),
      );
      if (st.edited(cursor.line, displaced)) toEnd(ed, st);
    }
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}

function toEnd(ed: vscode.TextEditor, st: FollowState): void {
  const last = ed.document.lineAt(ed.document.lineCount - 1).range.end;
  const shown = ed.visibleRanges[ed.visibleRanges.length - 1];
  // The view moves (and says so) only when the end is below what it shows.
  if (!shown || shown.end.line < last.line - 1) st.revealed();
  ed.selection = new vscode.Selection(last, last);
  st.endLine = last.line;
  ed.revealRange(new vscode.Range(last, last), vscode.TextEditorRevealType.Default);
}
