import { defineSelfMessage } from '../protocol/registry.js';

/**
 * The messages the Master sends itself (Spark's MasterMessages.scala): timers and the leader
 * election's callbacks become messages so that they are handled in order with everything else.
 * They are in no catalogue, so no peer can send them.
 */

export const CheckForWorkerTimeOut = defineSelfMessage(
  'CheckForWorkerTimeOut',
  'The worker timeout passed: mark silent workers DEAD and forget long-dead ones.',
);

export const CompleteRecovery = defineSelfMessage(
  'CompleteRecovery',
  'The recovery timeout passed: drop the workers and applications that did not answer.',
);

export const ElectedLeader = defineSelfMessage(
  'ElectedLeader',
  'The leader election chose this master: read the persisted state and lead.',
);

export const RevokedLeadership = defineSelfMessage(
  'RevokedLeadership',
  'This master no longer leads: forget the cluster and stand by.',
);
