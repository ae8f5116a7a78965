/** The resource check at submit time: a modal question when no worker could run an executor. */
import type { SubmitParams } from '../../backend/agent/protocol.js';
import type { Host } from '../host.js';
import type { Session } from '../session.js';
import { resourceProblem } from './resourceCheck.js';

export const SUBMIT_ANYWAY = 'Submit Anyway';

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
    SUBMIT_ANYWAY,
  );
  return choice === SUBMIT_ANYWAY;
}
