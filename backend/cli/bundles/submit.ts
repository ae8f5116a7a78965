// dist/cli/submit.cjs: `wick submit` alone (commandNames.ts, OWN_BUNDLES).
import { COMMAND_NAMES as N } from '../commandNames.js';
import { runProgram } from '../program.js';

runProgram([[N.submit, async () => (await import('../commands/submit.js')).registerSubmit]]);
