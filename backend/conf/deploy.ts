import { parseDurationMs } from './parse.js';
import { define } from './WickConf.js';

/**
 * Settings that both sides of the Worker ↔ Master boundary read, here so that neither daemon
 * imports the other's code: the master declares a worker DEAD after wick.worker.timeout, and a
 * worker heartbeats at a quarter of it (Spark's spark.worker.timeout, read by both too).
 */
export const DeployConf = {
  workerTimeout: define(
    'wick.worker.timeout',
    '60s',
    'A worker that sends no heartbeat for this long is DEAD (a bare number is seconds, as in Spark).',
    (raw) => parseDurationMs(raw, 's'),
  ),
};
