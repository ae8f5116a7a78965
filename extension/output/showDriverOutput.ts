import type * as vscode from 'vscode';
import type { Session } from '../session.js';
import type { DriverOutputs, DriverRun } from './driverOutputs.js';

/**
 * "Show Driver Output": a tree row (`{kind: 'output', appId}`), `{outputId}` (the submit toast's
 * "Show Logs"), `{appId}`, or nothing (the newest submit of this window).
 */
export async function showDriverOutput(
  outputs: DriverOutputs,
  session: Session,
  arg: unknown,
): Promise<vscode.TextEditor> {
  const a = (arg ?? {}) as { outputId?: unknown; appId?: unknown };
  let run: DriverRun | undefined;
  if (typeof a.outputId === 'string') run = outputs.get(a.outputId);
  else if (typeof a.appId === 'string') run = outputs.forApp(a.appId);
  else run = outputs.latest();
  if (!run)
    throw new Error(
      typeof a.appId === 'string'
        ? `${a.appId} was not submitted from this window: its driver output is not here (its driver's logs are, under Drivers, in cluster mode)`
        : 'No driver output in this window yet: submit a job with "Wick: Submit Job…"',
    );
  if (run.appId && !run.appName) {
    const s = session.state;
    const app = s && [...s.activeApps, ...s.completedApps].find((x) => x.id === run?.appId);
    if (app) run.appName = app.name;
  }
  return outputs.show(run);
}
