/**
 * A wait with a deadline that says what it was waiting for: a test whose step never comes fails
 * naming that step (and what the processes said, when `what` is a function that reads it),
 * instead of with the bare "test timed out" of node:test. The in-host e2e tests use it too.
 */
export function within<T>(
  ms: number,
  p: PromiseLike<T>,
  what: string | (() => string),
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    Promise.resolve(p),
    new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new Error(`timed out after ${ms} ms: ${typeof what === 'string' ? what : what()}`),
          ),
        ms,
      );
    }),
  ]).finally(() => clearTimeout(timer));
}
