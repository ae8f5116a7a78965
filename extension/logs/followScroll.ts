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

  /**
   * `trace` hears each decision that starts or stops a follow, and why (the Wick channel's trace
   * level; a test that sees a follow stop reads them).
   */
  constructor(
    private readonly schemes: string[],
    public trace: (message: string) => void = () => {},
  ) {
    this.disposables.push(
      vscode.workspace.onDidChangeTextDocument((e) => this.changed(e.document, e.contentChanges)),
      vscode.window.onDidChangeVisibleTextEditors((eds) => this.shown(eds)),
      vscode.window.onDidChangeTextEditorVisibleRanges((e) => {
        const st = this.states.get(e.textEditor);
        const first = e.visibleRanges[0];
        const last = e.visibleRanges[e.visibleRanges.length - 1];
        if (!st || !first || !last) return;
        const doc = e.textEditor.document;
        const was = st.following;
        const back = st.viewed(
          first.start.line,
          last.end.line,
          doc.lineCount - 1,
          e.textEditor.selection.active.line,
        );
        if (st.following !== was || back !== undefined)
          this.trace(
            `follow ${doc.uri.path}: view ${first.start.line}-${last.end.line} of ${doc.lineCount}, cursor ${e.textEditor.selection.active.line}: ${st.following ? 'following' : 'stopped'}${back === undefined ? '' : `, back to ${back}`}`,
          );
        if (back !== undefined)
          e.textEditor.revealRange(
            new vscode.Range(back, 0, back, 0),
            vscode.TextEditorRevealType.AtTop,
          );
      }),
      vscode.window.onDidChangeTextEditorSelection((e) => {
        const st = this.states.get(e.textEditor);
        if (!st) return;
        const line = e.selections[0]?.active.line ?? 0;
        const was = st.following;
        // The follow's moves sent before it heard of this one would take the cursor back.
        if (st.selected(line, e.textEditor.document.lineCount - 1, how(e.kind)))
          e.textEditor.selections = e.selections;
        if (st.following !== was)
          this.trace(
            `follow ${e.textEditor.document.uri.path}: the cursor put on ${line} (${how(e.kind)}): ${st.following ? 'following' : 'stopped'}`,
          );
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
      const was = st.following;
      if (st.edited(cursor.line, displaced)) toEnd(ed, st);
      else if (was)
        this.trace(
          `follow ${doc.uri.path}: an edit left the cursor on ${cursor.line} (follow's line ${st.endLine}): stopped`,
        );
    }
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}

/** Who moved a cursor, by VS Code's word for it (its own API calls are reported as commands). */
function how(kind: vscode.TextEditorSelectionChangeKind | undefined): 'hand' | 'command' | 'edit' {
  if (kind === undefined) return 'edit';
  return kind === vscode.TextEditorSelectionChangeKind.Command ? 'command' : 'hand';
}

function toEnd(ed: vscode.TextEditor, st: FollowState): void {
  const last = ed.document.lineAt(ed.document.lineCount - 1).range.end;
  const shown = ed.visibleRanges[ed.visibleRanges.length - 1];
  // The view moves (and says so) only when the end is below what it shows.
  if (!shown || shown.end.line < last.line - 1) st.revealed();
  ed.selection = new vscode.Selection(last, last);
  st.movedTo(last.line);
  ed.revealRange(new vscode.Range(last, last), vscode.TextEditorRevealType.Default);
}
