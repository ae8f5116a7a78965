import { defineSelfMessage } from '../../protocol/registry.js';

/** What the driver's endpoint sends itself (Spark's CoarseGrainedClusterMessages.ReviveOffers). */

export const ReviveOffers = defineSelfMessage(
  'ReviveOffers',
  "Offer the executors' free cores to the scheduler again (after a registration is answered).",
);
