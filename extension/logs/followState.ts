/**
 * Whether an editor follows its log's end, from what it reports: its view moving up is the user
 * scrolling (the follow itself only ever moves it down), and the user's own cursor moves (keyboard,
 * mouse) follow where they land. Pure: unit-tested. Lines are 0-based.
 */
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
   * on. A cursor off the end is someone's doing (their selection event may come later), unless
   * the edit itself put it there (`displaced`: the cursor sits where an edit that began above the
   * follow's line starts). VS Code applies a content provider's new text as the smallest edit it
   * finds, but when finding that takes over a second (a busy window) as one edit replacing the
   * whole document, which leaves the cursor at the document's start.
   */
  edited(cursorLine: number, displaced: boolean): boolean {
    const end = this.endLine;
    if (this.following && end !== undefined && cursorLine < end - 1 && !displaced)
      this.following = false;
    return this.following;
  }

  /** The user moved the cursor (not the follow, not an edit): it follows if it is at the end. */
  moved(cursorLine: number, lastLine: number): void {
    this.following = cursorLine >= lastLine - 1;
    this.ownMoves = 0;
  }
}
