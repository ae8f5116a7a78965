import { distFile } from '../../util/paths.js';

/** Replaces `{{NAME}}` in each argument with its value; unknown names are left as written. */
export function substituteVariables(
  argv: readonly string[],
  values: Readonly<Record<string, string>>,
): string[] {
  const all: Record<string, string> = { ...hostVariables(), ...values };
  return argv.map((arg) =>
    arg.replace(/\{\{([A-Z_]+)\}\}/g, (whole, name: string) => all[name] ?? whole),
  );
}

/**
 * This host's Node and Wick, for commands made on another host ({{WICK_NODE}} {{WICK_CLI}}
 * executor …): a driver names what to run, the worker where it is here (as Spark's worker runs
 * its own java and SPARK_HOME).
 */
function hostVariables(): Record<string, string> {
  let cli: string;
  try {
    cli = distFile('wick.cjs');
  } catch {
    return { WICK_NODE: process.execPath };
  }
  return { WICK_NODE: process.execPath, WICK_CLI: cli };
}

/** A command as Spark prints it in a log header: each argument in double quotes. */
export function formatCommand(argv: readonly string[]): string {
  return argv.map((a) => `"${a}"`).join(' ');
}
