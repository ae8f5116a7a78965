import '../conf/all.js';
import { Command } from 'commander';
import { registerAgent } from './commands/agent.js';
import { registerDaemons } from './commands/daemons.js';
import { registerDemo } from './commands/demo.js';
import { registerDriverWrapper } from './commands/driverWrapper.js';
import { registerExecutor } from './commands/executor.js';
import { registerKill } from './commands/kill.js';
import { registerLocalCluster } from './commands/localCluster.js';
import { registerLogs } from './commands/logs.js';
import { registerStatus } from './commands/status.js';
import { registerSubmit } from './commands/submit.js';
import { version } from './version.js';

/** `wick`: one binary for every daemon and command, as Spark's sbin/ and bin/ scripts are. */
export function buildProgram(): Command {
  const program = new Command('wick')
    .description("Wick: Apache Spark's standalone cluster manager, in TypeScript")
    .version(version, '-V, --version')
    .enablePositionalOptions()
    .showHelpAfterError('(run wick --help for the commands and their options)');
  registerDaemons(program);
  registerLocalCluster(program);
  registerSubmit(program);
  registerKill(program);
  registerDriverWrapper(program);
  registerStatus(program);
  registerLogs(program);
  registerExecutor(program);
  registerDemo(program);
  registerAgent(program);
  return program;
}

buildProgram()
  .parseAsync(process.argv)
  .catch((err: Error) => {
    console.error(`wick: ${err.message}`);
    process.exit(1);
  });
