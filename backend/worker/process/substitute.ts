/** Replaces `{{NAME}}` in each argument with its value; unknown names are left as written. */
export function substituteVariables(
  argv: readonly string[],
  values: Readonly<Record<string, string>>,
): string[] {
  return argv.map((arg) =>
    arg.replace(/\{\{([A-Z_]+)\}\}/g, (whole, name: string) => values[name] ?? whole),
  );
}

/** A command as Spark prints it in a log header: each argument in double quotes. */
export function formatCommand(argv: readonly string[]): string {
  return argv.map((a) => `"${a}"`).join(' ');
}
