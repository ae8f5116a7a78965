/**
 * Whether an editor follows its log's end, from what it reports: its view moving up is the user
 * scrolling (the follow itself only ever moves it down), and the user's own cursor moves (keyboard,
 * mouse, a command) follow where they land. Pure: unit-tested. Lines are 0-based.
 */

/** How many of the follow's own cursor moves a lagging window's reports are matched against. */
const MAX_OWN_LINES = 256;

export class FollowState {
  following = true;
  private lastTop: number | undefined;
  /**
   * The follow's own moves to the end not yet seen as a view change. The editor reports view
   * changes after the fact: a user who scrolls up while lines arrive is seen scrolling up, then
   * the follow's move to the end (made before it knew) arrives, with the cursor it put there;
   * that one must not count as the user coming back.
   */
  private ownMoves = 0;

  /** Where the user last looked when the follow stopped: the top line to go back to. */
  private stoppedAt: number | undefined;
  /** The last line the follow moved the cursor to. */
  endLine: number | undefined;
  /**
   * Lines the follow put the cursor on that the window has not reported yet. It reports a cursor
   * set through the API after the fact, and a busy window lags by several moves: "the cursor on
   * line 346" can arrive after the follow has moved it to 405 and before that move is applied.
   * Such a report is the follow's own move, late, not someone taking the cursor off the end.
   */
  private readonly ownLines: number[] = [];
  /** The last of the follow's own moves the window reported: where its cursor is by the follow. */
  private reportedOwn: number | undefined;

  /** The follow put the cursor on `line` (the end of the log as it knew it). */
  movedTo(line: number): void {
    this.endLine = line;
    this.ownLines.push(line);
    // Bounded: a window more than this many moves behind is past following anyway.
    if (this.ownLines.length > MAX_OWN_LINES) this.ownLines.shift();
  }

  /**
   * The window reports the cursor on `line`, after `how`: a user's hand (keys, mouse), a command
   * (an extension's, or the follow's own move reported back), or an edit that carried it.
   * - A command that put it on one of the follow's own lines is that move, reported late; the
   *   follow's moves made before it are done.
   * - An edit's report says nothing of them: lines appended carry a cursor at the end to where
   *   the follow may be about to put it too.
   * - Any other command, and any hand, is someone choosing where to read. Returns true when that
   *   stopped the follow while moves of its own were still on their way: they land after the
   *   user's, so the caller puts the cursor back where the user put it.
   */
  selected(line: number, lastLine: number, how: 'hand' | 'command' | 'edit'): boolean {
    if (how === 'edit') return false;
    const i = how === 'command' ? this.ownLines.indexOf(line) : -1;
    if (i >= 0) {
      this.reportedOwn = line;
      this.ownLines.splice(0, i + 1);
      // Each move still on its way, and this one, has at most its one view change to come.
      this.ownMoves = Math.min(this.ownMoves, this.ownLines.length + 1);
      return false;
    }
    const was = this.following;
    this.moved(line, lastLine);
    return was && !this.following && this.ownLines.length > 0;
  }

  /** The follow moved the view to the end: a view change at the end is expected from it. */
  revealed(): void {
    this.ownMoves++;
  }

  /**
   * The editor's visible range changed: its first and last line now. Returns the top line to
   * scroll back to when this change is the follow's own move, made after the user had scrolled
   * up (a move the user did not want).
   */
  viewed(top: number, bottom: number, lastLine: number, cursorLine: number): number | undefined {
    const atEnd = bottom >= lastLine - 1;
    const own = this.ownMoves > 0 && atEnd;
    if (own) this.ownMoves--;
    let back: number | undefined;
    if (this.lastTop !== undefined && top < this.lastTop) {
      this.following = false;
      this.stoppedAt = top;
    } else if (own && !this.following) back = this.stoppedAt;
    // Back at the end with the cursor there: follow again. The end counts as in view with the
    // line before it shown too (a log's last line is often the empty one after its newline).
    else if (!own && atEnd && cursorLine >= lastLine - 1) this.following = true;
    this.lastTop = back ?? top;
    return back;
  }

  /**
   * The log changed while followed, and the cursor is now on `cursorLine`: whether the follow goes
   * on. A cursor off the end is someone's doing (their selection event may come later), unless it
   * is a late report of one of the follow's own moves, or the edit itself put it there
   * (`displaced`: the cursor sits where an edit that began above the follow's line starts). VS
   * Code applies a content provider's new text as the smallest edit it finds, but when finding
   * that takes over a second (a busy window) as one edit replacing the whole document, which can
   * leave the cursor at the document's start.
   */
  edited(cursorLine: number, displaced: boolean): boolean {
    const end = this.endLine;
    if (
      this.following &&
      end !== undefined &&
      cursorLine < end - 1 &&
      !displaced &&
      cursorLine !== this.reportedOwn &&
      !this.ownLines.includes(cursorLine)
    )
      this.following = false;
    return this.following;
  }

  /** Someone moved the cursor (not the follow, not an edit): it follows if it is at the end. */
  moved(cursorLine: number, lastLine: number): void {
    this.following = cursorLine >= lastLine - 1;
    // (The follow's own moves still on their way stay known, and so do their view changes: their
    // late reports are not someone bringing the cursor or the view back to the end.)
  }
}
