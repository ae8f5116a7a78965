import { DecommissionWorker } from '../../protocol/deploy.js';
import { WorkerDecommissionSigReceived } from '../messages.js';
import type { Worker } from '../Worker.js';
import type { HandlerRegistry } from './on.js';

/**
 * Decommissioning, asked by the master it follows (an operator's DecommissionWorkersOnHosts;
 * fromMaster.ts lets in no one else) or by SIGPWR (the process's own signal handler, as a
 * message to itself): Decommission.ts does the rest.
 */
export function decommissionHandlers(w: Worker, { on }: HandlerRegistry): void {
  on(DecommissionWorker, () => w.decommission.start('the master asked'));
  on(WorkerDecommissionSigReceived, () => w.decommission.start('SIGPWR'));
}
