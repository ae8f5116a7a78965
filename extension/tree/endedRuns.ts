/**
 * A reload (or a restart) ends the local cluster and the runs it was running with it: the agent
 * marks them KILLED with why (backend/agent/runStore.ts), and the next window says so, once per
 * run, in a notification that names them and where they are, so no run ends silently.
 */
import type * as vscode from 'vscode';
import type { PastRun } from '../../backend/agent/protocol.js';
import type { Host } from '../host.js';
import type { Session } from '../session.js';

const TOLD = 'wick.endedRunsTold';

/** The runs a cluster's end killed (the agent's word, not a user's Kill), not told before. */
export function endedUntold(runs: readonly PastRun[], told: readonly string[]): PastRun[] {
  return runs.filter((r) => r.state === 'KILLED' && r.message && !told.includes(r.appId));
}

export function endedRunsMessage(ended: readonly PastRun[]): string {
  const names = ended.map((r) => `${r.name} (${r.appId})`).join(', ');
  const [first] = ended;
  return `Wick: ${ended.length === 1 ? '1 run was' : `${ended.length} runs were`} ended by its local cluster's end — ${first?.message ?? ''}: ${names}. ${ended.length === 1 ? 'It is' : 'They are'} under Completed, with ${ended.length === 1 ? 'its' : 'their'} output and logs.`;
}

export function registerEndedRunsNotice(
  session: Session,
  memento: vscode.Memento,
  host: Host,
): vscode.Disposable {
  return session.onDidChangePastRuns((runs) => {
    const told = memento.get<string[]>(TOLD, []);
    const ended = endedUntold(runs, told);
    if (ended.length === 0) return;
    void memento.update(TOLD, [...ended.map((r) => r.appId), ...told].slice(0, 200));
    void host.showWarningMessage(endedRunsMessage(ended), {});
  });
}
