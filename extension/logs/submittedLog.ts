/**
 * Which log "Show Logs" opens after a submit: the driver's stdout in cluster mode, else the stdout
 * of the application's first executor. Right after a submit the executors may not be there yet;
 * `undefined` then means "wait for the next state". Pure: unit-tested without vscode.
 */
import type { LogSource, MasterState } from '../../backend/agent/protocol.js';

const ENDED = new Set(['FINISHED', 'FAILED', 'KILLED']);

export interface Submitted {
  appId?: string;
  driverId?: string;
}

export function submittedLogSource(
  r: Submitted,
  state: MasterState | undefined,
): LogSource | undefined {
  if (r.driverId) return { driverId: r.driverId };
  if (!r.appId) throw new Error('The submit returned neither an application nor a driver id');
  const app = [...(state?.activeApps ?? []), ...(state?.completedApps ?? [])].find(
    (a) => a.id === r.appId,
  );
  const execs = [...(app?.executors ?? []), ...(app?.removedExecutors ?? [])];
  if (execs.length) {
    const first = execs.reduce((a, b) => (b.id < a.id ? b : a));
    return { appId: first.appId, execId: first.id };
  }
  if (app && ENDED.has(app.state))
    throw new Error(`${r.appId} ended ${app.state} before any executor started: it has no logs`);
  return undefined;
}
