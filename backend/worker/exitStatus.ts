import { constants } from 'node:os';

/** An exit as a shell reports it: the code, or 128 + the number of the signal that ended it. */
export function exitStatusOf(exit: {
  exitCode: number | undefined;
  signal: string | undefined;
}): number {
  if (exit.exitCode !== undefined) return exit.exitCode;
  const n = exit.signal ? (constants.signals as Record<string, number>)[exit.signal] : undefined;
  return n === undefined ? -1 : 128 + n;
}

export function describeExit(exit: {
  exitCode: number | undefined;
  signal: string | undefined;
}): string {
  return exit.exitCode !== undefined
    ? `Command exited with code ${exit.exitCode}`
    : `Command exited with signal ${exit.signal ?? 'unknown'}`;
}
