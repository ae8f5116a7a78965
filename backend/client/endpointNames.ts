/**
 * The names under which the daemons and the clients register their endpoints, for the programs
 * that address them from outside (a name is half of an endpoint's address on the wire). Pure, so
 * that any side may import it. The daemons still carry their own `ENDPOINT_NAME`; these are the
 * same strings and can become re-exports of backend/protocol/endpoints.ts once that exists.
 */

/** The Master endpoint of a `wick master`. */
export const MASTER_ENDPOINT = 'Master';
/** The Worker endpoint of a `wick worker`. */
export const WORKER_ENDPOINT = 'Worker';
/** A web UI's log follower in its daemon's RpcEnv (the follows its pages open). */
export const WEB_UI_ENDPOINT = 'WebUI';
/** The application's client of the masters, in its driver (Spark's StandaloneAppClient). */
export const APP_CLIENT_ENDPOINT = 'AppClient';
/** The master's web UI's mirror of the Master's state, in the master's RpcEnv. */
export const WEB_UI_STATE_ENDPOINT = 'WebUIState';
