import { conf } from './WickConf.js';

/**
 * Logs through the master (Spark's spark.ui.reverseProxy): a client that can reach only the
 * master — a laptop with a tunnel to port 7077 — still reads every worker's logs, because the
 * master relays them over its own connections with the workers.
 */
export const ReverseProxyConf = {
  enabled: conf.bool(
    'wick.ui.reverseProxy',
    false,
    'Clients (`wick logs`, the agent) read and follow every log through the master instead of trying the worker first.',
  ),
  workerConnectTimeout: conf.durationMs(
    'wick.ui.reverseProxy.workerConnectTimeout',
    '3s',
    'How long a client tries to reach a worker directly before it reads that worker’s logs through the master.',
  ),
  maxFollowsPerClient: conf.int(
    'wick.ui.reverseProxy.maxFollowsPerClient',
    32,
    'Log follows the master relays at once for one client; one more is refused with a message saying so.',
    1,
    10_000,
  ),
  maxTotalBacklog: conf.sizeBytes(
    'wick.ui.reverseProxy.maxTotalBacklog',
    '256m',
    'Bytes of relayed logs the master holds unsent for all its clients together; past it, the follow of a client that is behind is ended (saying from which offset to follow again), so that the memory of the master does not grow with the number of connections. Each client also has its own bound of 32 MiB.',
  ),
};
