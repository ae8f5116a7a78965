import '../conf/all.js';
import { Command } from 'commander';
import { version } from '../util/version.js';
import { COMMAND_NAMES as N } from './commandNames.js';
import { describeCliError } from './errors.js';

type Register = (program: Command) => void;

/**
 * Every command's module, by the names it registers. Each is loaded only when its command runs
 * (esbuild starts a module of the bundle on its first import): an executor, a driver or
 * `wick status` starts without running the master, the web UI or the agent, and start-up is most
 * of a submit's wait.
 */
const COMMANDS: readonly (readonly [names: readonly string[], load: () => Promise<Register>])[] = [
  [N.daemons, async () => (await import('./commands/daemons.js')).registerDaemons],
  [
    N.daemonControl,
    async () => (await import('./commands/daemonControl.js')).registerDaemonControl,
  ],
  [
    N.clusterScripts,
    async () => (await import('./commands/clusterScripts.js')).registerClusterScripts,
  ],
  [N.localCluster, async () => (await import('./commands/localCluster.js')).registerLocalCluster],
  [N.submit, async () => (await import('./commands/submit.js')).registerSubmit],
  [N.kill, async () => (await import('./commands/kill.js')).registerKill],
  [N.decommission, async () => (await import('./commands/decommission.js')).registerDecommission],
  [
    N.driverWrapper,
    async () => (await import('./commands/driverWrapper.js')).registerDriverWrapper,
  ],
  [N.status, async () => (await import('./commands/status.js')).registerStatus],
  [N.uiUrl, async () => (await import('./commands/uiUrl.js')).registerUiUrl],
  [N.logs, async () => (await import('./commands/logs.js')).registerLogs],
  [N.executor, async () => (await import('./commands/executor.js')).registerExecutor],
  [N.demo, async () => (await import('./commands/demo.js')).registerDemo],
  [N.agent, async () => (await import('./commands/agent.js')).registerAgent],
  [N.join, async () => (await import('./commands/join.js')).registerJoin],
  [N.history, async () => (await import('./commands/history.js')).registerHistory],
  [N.token, async () => (await import('./commands/token.js')).registerToken],
];

/**
 * `wick`: one binary for every daemon and command, as Spark's sbin/ and bin/ scripts are. When
 * `only` names a command, just that one is registered; --version needs none; anything else (help,
 * a typo, options first) gets all, so that help and commander's suggestions see every command.
 */
export async function buildProgram(only?: string): Promise<Command> {
  const program = new Command('wick')
    .description("Wick: Apache Spark's standalone cluster manager, in TypeScript")
    .version(version, '-V, --version')
    .enablePositionalOptions()
    .showHelpAfterError('(run wick --help for the commands and their options)');
  const named = COMMANDS.filter(([names]) => names.includes(only ?? ''));
  const toLoad = only === '-V' || only === '--version' ? [] : named.length > 0 ? named : COMMANDS;
  const registers = await Promise.all(toLoad.map(([, load]) => load()));
  for (const register of registers) register(program);
  return program;
}

buildProgram(process.argv[2])
  .then((program) => program.parseAsync(process.argv))
  .catch((err: unknown) => {
    console.error(`wick: ${describeCliError(err)}`);
    process.exit(1);
  });
