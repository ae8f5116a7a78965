/**
 * The environment a worker gives the processes it starts, read on the other side by Wick's
 * executor and driver (and by executors written in other languages, examples/python): named once
 * here, imported by both. The application's key (WICK_APP_CREDENTIAL) is named in
 * rpc/credentials.ts, as the transport reads it.
 */

// Worker → executor

/**
 * The application's local dirs on this worker, joined by the platform's path delimiter (`:`, or
 * `;` on Windows); the first holds the application's files and shuffle outputs.
 */
export const EXECUTOR_DIRS_ENV = 'WICK_EXECUTOR_DIRS';
/** Where the worker's web UI shows the executor's stdout, which it gives the driver as a log URL. */
export const LOG_URL_STDOUT_ENV = 'WICK_LOG_URL_STDOUT';
/** Where the worker's web UI shows the executor's stderr. */
export const LOG_URL_STDERR_ENV = 'WICK_LOG_URL_STDERR';
/**
 * The host:port of the worker's external shuffle service, when it runs one: the executors it
 * launches give it as their MapStatus.location.
 */
export const SHUFFLE_SERVICE_ADDRESS_ENV = 'WICK_SHUFFLE_SERVICE_ADDRESS';
/**
 * The custom resources' addresses the executor holds, as JSON by name (`{"gpu":["0"]}`): it
 * tells its driver (RegisterExecutor), which hands them to tasks. Spark's executors read a
 * resources file the worker writes; an environment variable needs no file to clean up.
 */
export const EXECUTOR_RESOURCES_ENV = 'WICK_EXECUTOR_RESOURCES';

// Worker → cluster-mode driver

/** The application's code tree, fetched from the master (also set by `wick submit` in client mode). */
export const APP_CODE_ENV = 'WICK_APP_CODE';
/** The folder of the files shipped with `--files`, fetched from the master; the driver adds each. */
export const ADDED_FILES_ENV = 'WICK_ADDED_FILES';

// Submit → driver (client mode: the submit's own process; cluster mode: through the driver's
// description, which its worker runs). The master's URL goes as WICK_MASTER, a user's setting
// too, named with the others in conf/load.ts.

/** The submit's resolved settings, as JSON (secrets left out), which the driver starts from. */
export const SUBMIT_CONF_ENV = 'WICK_SUBMIT_CONF';
/** The application's name given to the submit (--name). */
export const APP_NAME_ENV = 'WICK_APP_NAME';

/** The folder the application's modules resolve from on executors: its main file's. */
export const APP_DIR_ENV = 'WICK_APP_DIR';
