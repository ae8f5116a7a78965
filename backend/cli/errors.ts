/**
 * How a command's error is printed: its message alone, which names what was wrong and what was
 * expected; the JavaScript stack (and its causes') only when asked for, with `--verbose` or
 * WICK_DEBUG=1, as it says where Wick failed, not what the user should change.
 */
let stacks = false;

/** `--verbose`: errors print their stack. */
export function showErrorStacks(): void {
  stacks = true;
}

function wantsStacks(env: NodeJS.ProcessEnv): boolean {
  const debug = env.WICK_DEBUG;
  return stacks || (debug !== undefined && debug !== '' && debug !== '0' && debug !== 'false');
}

/** The line(s) after `wick: ` for an error that ended a command. */
export function describeCliError(err: unknown, env: NodeJS.ProcessEnv = process.env): string {
  if (!(err instanceof Error)) return String(err);
  if (!wantsStacks(env)) return err.message;
  const lines = [err.stack ?? err.message];
  for (let cause = err.cause; cause !== undefined; ) {
    lines.push(
      `Caused by: ${cause instanceof Error ? (cause.stack ?? cause.message) : String(cause)}`,
    );
    cause = cause instanceof Error ? cause.cause : undefined;
  }
  return lines.join('\n');
}
