import { parseMemoryMB } from './daemon.js';
import { parseInteger } from './parse.js';
import { conf, define } from './WickConf.js';

/**
 * What `wick submit` itself reads (Spark's spark.submit.deployMode and spark.driver.* of a
 * cluster-mode driver), so that a spark-defaults.conf that sets them works as it is.
 */
export const SubmitConf = {
  deployMode: define(
    'wick.submit.deployMode',
    'client',
    'Where `wick submit` runs the driver: client (in the submit itself) or cluster (on a worker); --deploy-mode.',
    (raw) => {
      const v = raw.trim();
      if (v !== 'client' && v !== 'cluster') {
        throw new Error(`expected "client" or "cluster", got "${raw}"`);
      }
      return v as 'client' | 'cluster';
    },
  ),
  driverMemory: define(
    'wick.driver.memory',
    '1g',
    'Memory for a cluster-mode driver, taken from its worker; --driver-memory.',
    parseMemoryMB,
  ),
  driverCores: define(
    'wick.driver.cores',
    '1',
    'Cores for a cluster-mode driver, taken from its worker; --driver-cores.',
    (raw) => parseInteger(raw, 1, 100_000),
  ),
  driverSupervise: conf.bool(
    'wick.driver.supervise',
    false,
    'Restart a cluster-mode driver that fails (or whose worker is lost); --supervise.',
  ),
};
