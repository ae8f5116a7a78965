/**
 * What a tree node shows, as plain data: nodes build these without touching the vscode API, so
 * the state → tree mapping is unit-tested as is; treeView.ts turns one into a vscode.TreeItem.
 */
export interface Item {
  id: string;
  label: string;
  description?: string;
  tooltip?: string;
  /** A codicon id and an optional theme colour id. */
  icon?: { id: string; color?: string };
  contextValue: string;
  collapsible: 'none' | 'collapsed' | 'expanded';
  command?: { command: string; title: string; arguments?: unknown[] };
}

export const stateIcon: Record<string, { id: string; color?: string }> = {
  ALIVE: { id: 'vm-running', color: 'charts.green' },
  DEAD: { id: 'vm-outline', color: 'errorForeground' },
  DECOMMISSIONED: { id: 'vm-outline', color: 'disabledForeground' },
  UNKNOWN: { id: 'question', color: 'charts.yellow' },
  RUNNING: { id: 'sync~spin', color: 'charts.blue' },
  WAITING: { id: 'watch', color: 'charts.yellow' },
  SUBMITTED: { id: 'watch', color: 'charts.yellow' },
  LAUNCHING: { id: 'loading~spin', color: 'charts.blue' },
  RELAUNCHING: { id: 'loading~spin', color: 'charts.yellow' },
  FINISHED: { id: 'pass', color: 'charts.green' },
  COMPLETED: { id: 'pass', color: 'charts.green' },
  FAILED: { id: 'error', color: 'errorForeground' },
  ERROR: { id: 'error', color: 'errorForeground' },
  KILLED: { id: 'circle-slash', color: 'charts.orange' },
  EXITED: { id: 'circle-outline' },
  LOST: { id: 'warning', color: 'charts.orange' },
};

export const lower = (s: string) => s.toLowerCase();

export function mb(n: number): string {
  return n >= 1024 ? `${(n / 1024).toFixed(n % 1024 === 0 ? 0 : 1)} GiB` : `${n} MiB`;
}

export function duration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
}

/** "1 core", "4 cores". */
export const cores = (n: number) => `${n} ${n === 1 ? 'core' : 'cores'}`;

/**
 * Whether an executor ended as its application meant it to: EXITED or KILLED once the app
 * FINISHED (its stop ends them), or KILLED with the app (a kill of the app kills them). Those
 * are no failure, and wear no failure icon; KILLED while the app runs, LOST and FAILED do.
 */
export function endedNormally(execState: string, appState: string | undefined): boolean {
  if (appState === 'FINISHED') return execState === 'EXITED' || execState === 'KILLED';
  if (appState === 'KILLED') return execState === 'KILLED' || execState === 'EXITED';
  return false;
}

export const normalEndIcon = { id: 'pass' };

/**
 * The icon of an executor that ended as its app meant it to: a plain check when the app finished,
 * a plain (uncoloured) slash when the app was killed — it was killed, not a success, not a fault.
 */
export function normalEndIconOf(appState: string | undefined): { id: string } {
  return appState === 'KILLED' ? { id: 'circle-slash' } : normalEndIcon;
}
