/**
 * The Applications view's filter: which application states it shows (a quick pick, kept with the
 * workspace) and Clear Completed (the applications and drivers completed so far leave this
 * window's view; later ones show). The view title says when a filter is on.
 */
import * as vscode from 'vscode';
import { ApplicationStates } from '../../backend/protocol/appStates.js';
import type { Session } from '../session.js';
import type { AppFilter } from './nodes/node.js';

/** The states a filter can pick: every state an application has (the master's own list). */
export const APP_STATES = ApplicationStates;
const KEY = 'wick.tree.appStates';

export class AppFilterControl {
  private states: string[] | undefined;
  private readonly cleared = new Set<string>();

  constructor(
    private readonly memento: vscode.Memento,
    private readonly session: Session,
    private readonly view: vscode.TreeView<unknown>,
  ) {
    const saved = memento.get<unknown>(KEY);
    this.states = validStates(saved);
    this.show();
  }

  get current(): AppFilter {
    return {
      ...(this.states ? { states: this.states } : {}),
      ...(this.cleared.size ? { cleared: this.cleared } : {}),
    };
  }

  /** Picks the states to show; `preset` (tests, keybindings) skips the question. */
  async pick(preset?: string[]): Promise<AppFilter | undefined> {
    let chosen = preset !== undefined ? (validStates(preset) ?? []) : undefined;
    if (preset === undefined) {
      const picked = await vscode.window.showQuickPick(
        APP_STATES.map((s) => ({ label: s, picked: !this.states || this.states.includes(s) })),
        { title: 'Wick: show applications that are…', canPickMany: true },
      );
      if (!picked) return undefined;
      chosen = picked.map((p) => p.label);
    }
    // Every state (or none: an empty view helps nobody) is no filter.
    this.states =
      chosen && chosen.length > 0 && chosen.length < APP_STATES.length ? chosen : undefined;
    await this.memento.update(KEY, this.states);
    this.show();
    return this.current;
  }

  clearCompleted(): AppFilter {
    const s = this.session.state;
    for (const a of s?.completedApps ?? []) this.cleared.add(a.id);
    for (const d of s?.completedDrivers ?? []) this.cleared.add(d.id);
    this.show();
    return this.current;
  }

  private show(): void {
    const parts = [
      ...(this.states ? [`showing ${this.states.join(', ')}`] : []),
      ...(this.cleared.size ? [`${this.cleared.size} completed cleared`] : []),
    ];
    this.view.description = parts.length ? parts.join(' · ') : undefined;
    void vscode.commands.executeCommand('setContext', 'wick.appsFiltered', parts.length > 0);
    for (const t of this.session.trees) t.refresh();
  }
}

function validStates(raw: unknown): string[] | undefined {
  if (!Array.isArray(raw)) return undefined;
  const ok = raw.filter((s): s is string =>
    (APP_STATES as readonly string[]).includes(s as string),
  );
  return ok.length ? [...new Set(ok)] : undefined;
}
