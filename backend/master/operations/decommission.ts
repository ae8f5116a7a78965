import { ExecutorDecommissioned } from '../../protocol/app.js';
import { DecommissionWorker } from '../../protocol/deploy.js';
import { getLogger } from '../../util/log.js';
import type { WorkerInfo } from '../WorkerInfo.js';
import type { OperationsContext } from './context.js';

/**
 * Decommissioning a worker (Spark 3.1's Master.decommissionWorker): it is listed DECOMMISSIONED
 * and placement passes it over from now on; the driver of each application with an executor
 * there is told (ExecutorDecommissioned), so that it places no more tasks on it and stops it once
 * its running tasks end. The executors stay in the tables until their worker reports how they
 * ended, as any executor's end: only then are their cores free for the application to be given
 * executors elsewhere. The worker itself exits once nothing runs there (or at its
 * wick.worker.decommission.forceKillTimeout), and the master removes it then, as it removes any
 * worker whose connection drops.
 */

const log = getLogger('Master');

/**
 * Marks `worker` DECOMMISSIONED and tells its executors' drivers; `tellWorker` when the request
 * came from an operator (the worker's own WorkerDecommissioning needs no answer). False if it was
 * decommissioning already.
 */
export function decommissionWorker(
  c: OperationsContext,
  worker: WorkerInfo,
  why: string,
  tellWorker: boolean,
): boolean {
  if (worker.state === 'DECOMMISSIONED') return false;
  log.info(`Decommissioning worker ${worker.id} on ${worker.hostPort}: ${why}`);
  c.cluster.decommissionWorker(worker);
  for (const exec of worker.executors.values()) {
    const app = c.cluster.appById(exec.appId);
    app?.driver.send(
      ExecutorDecommissioned({
        id: exec.id,
        workerHost: worker.host,
        message: `worker ${worker.id} decommissioned: ${why}`,
      }),
    );
  }
  if (tellWorker) worker.endpoint.send(DecommissionWorker({}));
  return true;
}

/**
 * The registered workers an operator names (DecommissionWorkersOnHosts): every one on a named
 * host, and each named by id; with the names that matched nothing.
 */
export function workersNamed(
  registered: Iterable<WorkerInfo>,
  hostnames: readonly string[],
  workerIds: readonly string[],
): { workers: WorkerInfo[]; unmatched: string[] } {
  const hosts = new Set(hostnames);
  const ids = new Set(workerIds);
  const matched = new Set<string>();
  const workers: WorkerInfo[] = [];
  for (const w of registered) {
    const byHost = hosts.has(w.host);
    const byId = ids.has(w.id);
    if (byHost) matched.add(`host:${w.host}`);
    if (byId) matched.add(`id:${w.id}`);
    if (byHost || byId) workers.push(w);
  }
  const unmatched = [
    ...hostnames.filter((h) => !matched.has(`host:${h}`)),
    ...workerIds.filter((id) => !matched.has(`id:${id}`)),
  ];
  return { workers, unmatched };
}
