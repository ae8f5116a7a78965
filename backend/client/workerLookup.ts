import { WORKER_ENDPOINT } from '../protocol/endpoints.js';
import type { WorkerSummary } from '../protocol/state.js';
import type { RpcEndpointRef, RpcEnv } from '../rpc/index.js';

export { findLogWorker, findWorker, LookupFailed, type LookupState } from '../shared/logLookup.js';

/** The Worker endpoint of a worker the master lists. */
export function workerEndpoint(
  env: RpcEnv,
  w: Pick<WorkerSummary, 'host' | 'port'>,
): RpcEndpointRef {
  return env.endpointRef({ address: `${w.host}:${w.port}`, name: WORKER_ENDPOINT });
}
