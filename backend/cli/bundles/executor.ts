// dist/cli/executor.cjs: `wick executor` and `wick executor-standby` alone (commandNames.ts, OWN_BUNDLES).
import { COMMAND_NAMES as N } from '../commandNames.js';
import { runProgram } from '../program.js';

runProgram([[N.executor, async () => (await import('../commands/executor.js')).registerExecutor]]);
