/**
 * Prints backend/protocol/aotChecks.ts as a bundle gets it: the protocol's validators compiled
 * ahead of time (backend/protocol/aotChecksModule.ts). scripts/build.mjs runs it and puts the
 * text in place of that module in every bundle.
 *
 *   node --import tsx scripts/gen-aot-checks.ts > FILE
 */
import { aotChecksModule } from '../backend/protocol/aotChecksModule.js';

process.stdout.write(aotChecksModule());
