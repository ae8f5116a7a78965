/**
 * After a submit, selects the new app in the Applications view and keeps it selected as it moves
 * from Waiting to Running to Completed, until the user selects something else or submits again.
 *
 * Why it is not one `view.reveal`: a reveal of a node the view does not know resolves its parents
 * against the view's own fetch of their children, and fails while a refresh is re-fetching them
 * (each pushed change refreshes the view); a reveal of an instance a newer render has replaced can
 * resolve having selected nothing; and a selected app that moves to another group is a new row,
 * which VS Code does not select. So each reveal waits for the view to be quiet, uses the instance
 * the view was last given, checks that the selection took, and is made again in the app's new
 * group after it moves.
 */
import type * as vscode from 'vscode';
import type { Session } from '../session.js';
import { findApp } from './model.js';
import type { Node } from './nodes/node.js';
import type { WickTreeProvider } from './treeView.js';

/** Past the view's own coalescing of refreshes (200 ms in VS Code's extension host). */
const QUIET_MS = 400;
/** A busy cluster may never be quiet that long: the reveal is tried anyway after this. */
const QUIET_AT_MOST_MS = 1500;
/** How long a reveal's selection may take to reach the extension host before it counts as lost. */
const SELECTION_MS = 1000;
const ATTEMPTS = 5;
/** The selection stops following an app that has not ended after this long. */
const FOLLOW_AT_MOST_MS = 10 * 60_000;

type Group = Extract<Node, { kind: 'group' }>['group'];

export class SubmittedSelection {
  /** Reveals started so far: each one knows whether a later one has superseded it. */
  private generation = 0;
  private chain: Promise<void> = Promise.resolve();
  /** Ends the current follow's wait for its app to move: a later submit takes over at once. */
  private interrupt: (() => void) | undefined;

  constructor(
    private readonly session: Session,
    private readonly provider: WickTreeProvider,
    private readonly view: vscode.TreeView<Node>,
  ) {}

  /**
   * Selects `appId` and follows it from group to group. Rejects when it could not be selected at
   * all; resolves once it is selected in Completed, the user selected something else, or a later
   * submit took over.
   */
  reveal(appId: string): Promise<void> {
    // One at a time, so that an older reveal still in flight cannot land after a newer one.
    const generation = ++this.generation;
    this.interrupt?.();
    const run = this.chain.then(() => this.follow(appId, generation));
    this.chain = run.catch(() => {});
    return run;
  }

  private async follow(appId: string, generation: number): Promise<void> {
    const superseded = () => generation !== this.generation;
    const until = Date.now() + FOLLOW_AT_MOST_MS;
    // The push that added the app reaches the views only after the session's debounce.
    await this.session.settled();
    let group = await this.select(appId, superseded);
    while (group !== undefined && group !== 'completed' && !superseded() && Date.now() < until) {
      await this.moved(appId, group, until);
      if (superseded() || !this.onlyThisSelected(appId)) return;
      group = await this.select(appId, superseded);
    }
  }

  /** Reveals the app, after a quiet moment, until the selection holds it; returns its group. */
  private async select(appId: string, superseded: () => boolean): Promise<Group | undefined> {
    let last: unknown = 'not there';
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      await this.quiet();
      // A later submit's reveal supersedes this one: an older app must not take the selection back.
      if (superseded()) return undefined;
      const found = findApp(appId, this.session.model());
      if (!found) continue;
      const shown = this.provider.shownNode((n) => n.kind === 'app' && n.app.id === appId);
      if (!shown) this.provider.setParent(found.node, found.parent);
      const selected = this.selectionChanged(appId);
      try {
        await this.view.reveal(shown ?? found.node, { select: true, focus: false, expand: true });
      } catch (err) {
        last = err;
        continue;
      }
      if (await selected) return (found.parent as Extract<Node, { kind: 'group' }>).group;
      last = 'the view did not select it';
    }
    throw new Error(`Could not show ${appId} in the Applications view: ${String(last)}`);
  }

  /** Resolves once the app is in another group than `group`, at `until`, or on a later submit. */
  private moved(appId: string, group: Group, until: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        sub.dispose();
        clearTimeout(timer);
        this.interrupt = undefined;
        resolve();
      };
      const check = () => {
        const found = findApp(appId, this.session.model());
        const now = found && (found.parent as Extract<Node, { kind: 'group' }>).group;
        if (now !== group || Date.now() >= until) done();
      };
      this.interrupt = done;
      const sub = this.session.onDidChange(check);
      const timer = setTimeout(check, Math.max(0, until - Date.now()));
      check();
    });
  }

  /** True while the user has not selected anything but this app (a moved row is unselected). */
  private onlyThisSelected(appId: string): boolean {
    return this.view.selection.every((n) => n.kind === 'app' && n.app.id === appId);
  }

  /**
   * Resolves true once the view's selection holds the app (a change heard, or seen by polling: the
   * extension host maps selected ids to the latest rendered nodes without an event), false after
   * SELECTION_MS. Started before the reveal, so that a selection arriving with it is not missed;
   * the first poll comes after the reveal has been asked.
   */
  private selectionChanged(appId: string): Promise<boolean> {
    const has = () => this.view.selection.some((n) => n.kind === 'app' && n.app.id === appId);
    return new Promise((resolve) => {
      const done = (v: boolean) => {
        sub.dispose();
        clearInterval(poll);
        clearTimeout(timer);
        resolve(v);
      };
      const check = () => {
        if (has()) done(true);
      };
      const sub = this.view.onDidChangeSelection(check);
      const poll = setInterval(check, 50);
      const timer = setTimeout(() => done(has()), SELECTION_MS);
    });
  }

  /** Resolves once the session has not refreshed the views for QUIET_MS, or after QUIET_AT_MOST_MS. */
  private quiet(): Promise<void> {
    return new Promise((resolve) => {
      let timer = setTimeout(done, QUIET_MS);
      const cap = setTimeout(done, QUIET_AT_MOST_MS);
      const sub = this.session.onDidChange(() => {
        clearTimeout(timer);
        timer = setTimeout(done, QUIET_MS);
      });
      function done() {
        clearTimeout(timer);
        clearTimeout(cap);
        sub.dispose();
        resolve();
      }
    });
  }
}
