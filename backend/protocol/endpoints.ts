/**
 * The names under which the daemons register their endpoints and name their RpcEnvs: what a peer
 * needs to reach one, kept apart from the endpoints' classes so that reaching a worker does not
 * mean importing the Worker (and everything it imports).
 */

export const MASTER_ENDPOINT = 'Master';
export const MASTER_SYSTEM = 'wickMaster';
export const WORKER_ENDPOINT = 'Worker';
export const WORKER_SYSTEM = 'wickWorker';
/** A web UI's log follower in its daemon's RpcEnv (the follows its pages open). */
export const WEB_UI_ENDPOINT = 'WebUI';
/**
 * The master's relay of the workers' log messages (RequestLogRange, FollowLog, StopFollowLog), in
 * the master's RpcEnv: how a client that cannot reach a worker reads its logs.
 */
export const LOG_RELAY_ENDPOINT = 'LogRelay';
/** The master's web UI's mirror of the Master's state, in the master's RpcEnv. */
export const WEB_UI_STATE_ENDPOINT = 'WebUIState';
/** The application's client of the masters, in its driver (Spark's StandaloneAppClient). */
export const APP_CLIENT_ENDPOINT = 'AppClient';
/** The files an RpcEnv offers to fetch by content (a driver's application code and files). */
export const FILE_SERVER_ENDPOINT = 'Files';
/**
 * The driver's scheduler endpoint that executors register with and report task status to
 * (Spark's CoarseGrainedSchedulerBackend.ENDPOINT_NAME); a driver in another language registers
 * its own under this name, and the executor command's {{DRIVER_URL}} names it.
 */
export const DRIVER_ENDPOINT = 'CoarseGrainedScheduler';
/** An executor's endpoint, in the executor's RpcEnv: where its driver sends tasks. */
export const EXECUTOR_ENDPOINT = 'Executor';
/**
 * What watches the worker that started a process (Spark's WorkerWatcher), in an executor's or a
 * cluster-mode driver's RpcEnv.
 */
export const WORKER_WATCHER_ENDPOINT = 'WorkerWatcher';
