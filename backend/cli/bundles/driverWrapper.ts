// dist/cli/driver-wrapper.cjs: `wick driver-wrapper` alone (commandNames.ts, OWN_BUNDLES).
import { COMMAND_NAMES as N } from '../commandNames.js';
import { runProgram } from '../program.js';

runProgram([
  [
    N.driverWrapper,
    async () => (await import('../commands/driverWrapper.js')).registerDriverWrapper,
  ],
]);
