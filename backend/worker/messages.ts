import { defineSelfMessage } from '../protocol/registry.js';

/**
 * The messages the Worker sends itself, from its timers (Spark's WorkerMessages): in no
 * catalogue, so no peer can send them; each is handled in the worker's inbox, in order with what
 * its peers send.
 */

export const SendHeartbeat = defineSelfMessage(
  'SendHeartbeat',
  'Time to heartbeat to the master, if connected.',
);

export const ReregisterWithMaster = defineSelfMessage(
  'ReregisterWithMaster',
  'Time to retry registering, unless registered meanwhile.',
);

export const WorkDirCleanup = defineSelfMessage(
  'WorkDirCleanup',
  'Time to delete old application directories from the work dir.',
);

export const WorkerDecommissionSigReceived = defineSelfMessage(
  'WorkerDecommissionSigReceived',
  "The process got SIGPWR with wick.decommission.enabled: decommission (Spark's, of the same name).",
);
