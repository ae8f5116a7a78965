import { DecommissionWorkersOnHosts, WorkersDecommissioned } from '../../protocol/client.js';
import { WorkerDecommissioning } from '../../protocol/deploy.js';
import type { MessageOf } from '../../protocol/registry.js';
import type { RpcSenderContext } from '../../rpc/index.js';
import { getLogger } from '../../util/log.js';
import { decommissionWorker, workersNamed } from '../operations/decommission.js';
import { checkFromWorker } from '../senders.js';
import type { HandlerContext, HandlerRegistry } from './context.js';

/**
 * Decommissioning workers: an operator's request (a client's: the router lets in only the
 * cluster secret's holders for a client message, never an application's key), and a worker's
 * own word that it is decommissioning (SIGPWR), heard only over the connection it registered on.
 */

const log = getLogger('Master');

export function decommissionHandlers(m: HandlerContext, on: HandlerRegistry): void {
  on(DecommissionWorkersOnHosts, (msg) => decommissionWorkersOnHosts(m, msg));
  on(WorkerDecommissioning, (msg, sender) => workerDecommissioning(m, msg, sender));
}

function decommissionWorkersOnHosts(
  m: HandlerContext,
  msg: MessageOf<typeof DecommissionWorkersOnHosts>,
) {
  const workerIds = msg.workerIds ?? [];
  if (m.status !== 'ALIVE') {
    return WorkersDecommissioned({
      success: false,
      workerIds: [],
      message: `Current state is not alive: ${m.status}. Can only decommission workers in ALIVE state.`,
    });
  }
  if (msg.hostnames.length === 0 && workerIds.length === 0) {
    return WorkersDecommissioned({
      success: false,
      workerIds: [],
      message: 'Name at least one host or worker id to decommission',
    });
  }
  const { workers, unmatched } = workersNamed(
    m.cluster.registeredWorkers(),
    msg.hostnames,
    workerIds,
  );
  const done: string[] = [];
  const already: string[] = [];
  for (const w of workers) {
    if (decommissionWorker(m.ops, w, 'asked by an operator', true)) done.push(w.id);
    else already.push(w.id);
  }
  const parts = [
    done.length > 0 ? `Decommissioning ${done.join(', ')}` : undefined,
    already.length > 0 ? `already decommissioning: ${already.join(', ')}` : undefined,
    unmatched.length > 0
      ? `no registered worker at ${unmatched.map((u) => JSON.stringify(u)).join(', ')} (expected a host or a worker id that \`wick status\` lists)`
      : undefined,
  ].filter((p) => p !== undefined);
  log.info(`DecommissionWorkersOnHosts: ${parts.join('; ')}`);
  return WorkersDecommissioned({
    success: done.length + already.length > 0,
    workerIds: [...done, ...already],
    message: parts.join('; '),
  });
}

function workerDecommissioning(
  m: HandlerContext,
  msg: MessageOf<typeof WorkerDecommissioning>,
  sender: RpcSenderContext,
): void {
  const worker = m.cluster.workerById(msg.id);
  if (!worker) {
    log.warn(`WorkerDecommissioning from unknown worker ${msg.id}`);
    return;
  }
  checkFromWorker(worker, sender, `WorkerDecommissioning of ${worker.id}`);
  decommissionWorker(m.ops, worker, 'the worker is decommissioning itself', false);
}
