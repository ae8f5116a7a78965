/** The resource check at submit time: a modal question when no worker could run an executor. */
import * as vscode from 'vscode';
import type { SubmitParams } from '../../backend/agent/protocol.js';
import type { Host } from '../host.js';
import type { Session } from '../session.js';
import { resourceProblem } from './resourceCheck.js';

export const SUBMIT_ANYWAY = 'Submit Anyway';
export const CHANGE_SETTINGS = 'Change Settings';

/** True to go on: the executors fit, or the user chose to submit anyway (a bigger worker may join). */
export async function resourcesFit(
  d: { host: Host; session: Session },
  params: SubmitParams,
): Promise<boolean> {
  const problem = resourceProblem(params, d.session.state);
  if (!problem) return true;
  const choice = await d.host.showWarningMessage(
    `${problem}: the application would wait until a bigger worker joins. Submit anyway?`,
    {
      modal: true,
      detail:
        'Change the executor memory or cores when you submit (defaults: settings wick.submit.executorMemory and wick.submit.executorCores).',
    },
    // The first button is the default (Enter): the safe one, which also says what to do next.
    CHANGE_SETTINGS,
    SUBMIT_ANYWAY,
  );
  if (choice === CHANGE_SETTINGS)
    void vscode.commands.executeCommand('workbench.action.openSettings', 'wick.submit.executor');
  return choice === SUBMIT_ANYWAY;
}
