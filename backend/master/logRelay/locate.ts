import type { RpcEndpointRef } from '../../rpc/index.js';
import { findLogWorker } from '../../shared/logLookup.js';
import type { LogSource } from '../../shared/logSource.js';
import type { ClusterView } from '../handlers/context.js';

/**
 * The Worker endpoint that holds a log, from the master's own tables, with the lookup every client
 * uses (so the relay says "No executor 3 of app-…" as `wick logs` does). The ref is the one the
 * master talks to the worker with: over the connection the worker opened when it registered.
 */
export function locateLogWorker(cluster: ClusterView, source: LogSource): RpcEndpointRef {
  const summary = findLogWorker(cluster.summaries(), source);
  const worker = cluster.workerById(summary.id);
  if (!worker) throw new Error(`Worker ${summary.id} is listed but not registered`);
  return worker.endpoint;
}
