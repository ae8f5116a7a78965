/**
 * A model of a followed log's editor for FollowState's property tests: the window (its lines, view
 * and cursor) and the extension host (what it last heard, and the follow's glue as FollowScroll
 * has it), joined by two ordered message queues that either side may read late, as a busy VS Code
 * does. The window echoes an API cursor move as a command, carries a cursor at the end along with
 * appended lines (an edit), and reports each view change.
 */
import { FollowState } from '../../extension/logs/followState.js';

type ToWindow = { k: 'cursor'; line: number } | { k: 'reveal'; line: number; atTop: boolean };
type ToHost =
  | { k: 'doc'; lines: number }
  | { k: 'cursor'; line: number; how: 'hand' | 'command' | 'edit' }
  | { k: 'view'; top: number; bottom: number };

/** Lines a view shows. */
const HEIGHT = 36;

export class FollowWindow {
  readonly follow = new FollowState();
  // The window's side.
  lines: number;
  top = 0;
  cursor = 0;
  // The extension host's side: what it heard last.
  private hostLines: number;
  private hostBottom: number;
  private hostCursor = 0;
  private readonly toWindow: ToWindow[] = [];
  private readonly toHost: ToHost[] = [];

  constructor(lines: number) {
    this.lines = lines;
    this.hostLines = lines;
    this.hostBottom = this.bottom();
    this.toEnd();
  }

  bottom(): number {
    return Math.min(this.top + HEIGHT - 1, this.lines - 1);
  }

  /** Lines appended to the log, in the window. */
  append(n: number): void {
    const atEnd = this.cursor === this.lines - 1;
    const bottom = this.bottom();
    this.lines += n;
    this.toHost.push({ k: 'doc', lines: this.lines });
    if (atEnd) {
      this.cursor = this.lines - 1;
      this.toHost.push({ k: 'cursor', line: this.cursor, how: 'edit' });
    }
    if (this.bottom() !== bottom) this.toHost.push(this.view());
  }

  /** The user scrolls the view up by `by` lines. */
  scrollUp(by: number): number {
    this.scroll(Math.max(0, this.top - by));
    return this.top;
  }

  /** An extension (a test standing for the user) puts the cursor on `line` through the API. */
  commandCursor(line: number): void {
    this.hostCursor = line;
    this.toWindow.push({ k: 'cursor', line });
  }

  /** The window handles the oldest message from the host; false if there was none. */
  windowStep(): boolean {
    const m = this.toWindow.shift();
    if (!m) return false;
    if (m.k === 'cursor') {
      this.cursor = Math.min(m.line, this.lines - 1);
      this.toHost.push({ k: 'cursor', line: this.cursor, how: 'command' });
    } else if (m.atTop) this.scroll(m.line);
    else if (m.line > this.bottom()) this.scroll(m.line - HEIGHT + 1);
    else if (m.line < this.top) this.scroll(m.line);
    return true;
  }

  /** The host handles the oldest message from the window, as FollowScroll does; false if none. */
  hostStep(): boolean {
    const m = this.toHost.shift();
    if (!m) return false;
    if (m.k === 'doc') {
      this.hostLines = m.lines;
      if (this.follow.edited(this.hostCursor, false)) this.toEnd();
    } else if (m.k === 'cursor') {
      this.hostCursor = m.line;
      if (this.follow.selected(m.line, this.hostLines - 1, m.how)) this.commandCursor(m.line);
    } else {
      this.hostBottom = m.bottom;
      const back = this.follow.viewed(m.top, m.bottom, this.hostLines - 1, this.hostCursor);
      if (back !== undefined) this.toWindow.push({ k: 'reveal', line: back, atTop: true });
    }
    return true;
  }

  /** Both sides handle everything on its way. */
  settle(): void {
    while (this.windowStep() || this.hostStep()) {}
  }

  private toEnd(): void {
    const last = this.hostLines - 1;
    if (this.hostBottom < last - 1) this.follow.revealed();
    this.hostCursor = last;
    this.follow.movedTo(last);
    this.toWindow.push({ k: 'cursor', line: last }, { k: 'reveal', line: last, atTop: false });
  }

  private scroll(top: number): void {
    const t = Math.max(0, Math.min(top, this.lines - 1));
    if (t === this.top) return;
    this.top = t;
    this.toHost.push(this.view());
  }

  private view(): ToHost {
    return { k: 'view', top: this.top, bottom: this.bottom() };
  }
}
