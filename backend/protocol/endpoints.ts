/**
 * The names under which the daemons register their endpoints and name their RpcEnvs: what a peer
 * needs to reach one, kept apart from the endpoints' classes so that reaching a worker does not
 * mean importing the Worker (and everything it imports).
 */

export const MASTER_ENDPOINT = 'Master';
export const MASTER_SYSTEM = 'wickMaster';
export const WORKER_ENDPOINT = 'Worker';
export const WORKER_SYSTEM = 'wickWorker';
