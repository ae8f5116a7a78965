import '../conf/all.js';
import { Command } from 'commander';
import { version } from '../util/version.js';
import { describeCliError } from './errors.js';

export type Register = (program: Command) => void;

/** A command module, by the names it registers, loaded only when one of them runs. */
export type CommandModule = readonly [names: readonly string[], load: () => Promise<Register>];

/**
 * `wick`: one binary for every daemon and command, as Spark's sbin/ and bin/ scripts are. When
 * `only` names a command, just that one is registered; --version needs none; anything else (help,
 * a typo, options first) gets all, so that help and commander's suggestions see every command.
 */
export async function buildProgram(
  commands: readonly CommandModule[],
  only?: string,
): Promise<Command> {
  const program = new Command('wick')
    .description("Wick: Apache Spark's standalone cluster manager, in TypeScript")
    .version(version, '-V, --version')
    .enablePositionalOptions()
    .showHelpAfterError('(run wick --help for the commands and their options)');
  const named = commands.filter(([names]) => names.includes(only ?? ''));
  const toLoad = only === '-V' || only === '--version' ? [] : named.length > 0 ? named : commands;
  const registers = await Promise.all(toLoad.map(([, load]) => load()));
  for (const register of registers) register(program);
  return program;
}

/** Runs this process's command line with `commands`; a failure is printed, exit code 1. */
export function runProgram(commands: readonly CommandModule[]): void {
  buildProgram(commands, process.argv[2])
    .then((program) => program.parseAsync(process.argv))
    .catch((err: unknown) => {
      console.error(`wick: ${describeCliError(err)}`);
      process.exit(1);
    });
}
