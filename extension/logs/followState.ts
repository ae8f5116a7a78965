/**
 * Whether an editor follows its log's end, from what it reports: its view moving up is the user
 * scrolling (the follow itself only ever moves it down), and the user's own cursor moves (keyboard,
 * mouse) follow where they land. Pure: unit-tested. Lines are 0-based.
 */
export class FollowState {
  following = true;
  private lastTop: number | undefined;

  /** The editor's visible range changed: its first and last line now. */
  viewed(top: number, bottom: number, lastLine: number, cursorLine: number): void {
    if (this.lastTop !== undefined && top < this.lastTop) this.following = false;
    // Back at the end with the cursor there: follow again. The end counts as in view with the
    // line before it shown too (a log's last line is often the empty one after its newline).
    else if (bottom >= lastLine - 1 && cursorLine >= lastLine - 1) this.following = true;
    this.lastTop = top;
  }

  /** The user moved the cursor (not the follow, not an edit): it follows if it is at the end. */
  moved(cursorLine: number, lastLine: number): void {
    this.following = cursorLine >= lastLine - 1;
  }
}
