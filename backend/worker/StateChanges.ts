/**
 * Tells whoever shows the worker's state (its web UI's pages) that it changed. The components
 * that hold what the page shows (the resources, the runners, the master connection, the log
 * follows) are given `changed` and call it themselves on each change, so that no handler has
 * to remember to: a forgotten call was a page that stayed stale.
 */
export class StateChanges {
  private readonly listeners = new Set<() => void>();

  /** Calls `fn` after each change; returns a function that stops it. */
  listen(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Something the page shows changed. */
  readonly changed = (): void => {
    for (const fn of [...this.listeners]) fn();
  };
}
