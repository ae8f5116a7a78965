import { constants } from 'node:os';
import type { WickConf } from '../conf/WickConf.js';
import { WorkerConf } from '../conf/worker.js';
import { getLogger } from '../util/log.js';
import { WorkerDecommissionSigReceived } from './messages.js';
import type { Worker } from './Worker.js';

const log = getLogger('Worker');

/**
 * SIGPWR decommissions the worker when wick.decommission.enabled (Spark's worker registers the
 * same handler under spark.decommission.enabled; cloud providers send it before they take a
 * machine away). The handler only posts a message to the worker, which decommissions in its own
 * inbox, in order with what its peers send. Off, nothing is installed: SIGPWR ends the process,
 * Node's default. Returns a function that removes the handler.
 */
export function decommissionOnSigpwr(conf: WickConf, worker: Worker): () => void {
  if (!conf.get(WorkerConf.decommissionEnabled)) return () => {};
  if (constants.signals.SIGPWR === undefined) {
    log.warn(
      'wick.decommission.enabled is set, but this platform has no SIGPWR: decommission this worker with `wick decommission` instead',
    );
    return () => {};
  }
  const handler = () => {
    log.info('Received SIGPWR: decommissioning');
    worker.self.send(WorkerDecommissionSigReceived({}));
  };
  process.on('SIGPWR', handler);
  return () => process.off('SIGPWR', handler);
}
