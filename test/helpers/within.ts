/**
 * A wait with a deadline that says what it was waiting for: a test whose step never comes fails
 * naming that step (and, with `detail`, what the processes said), instead of with the bare
 * "test timed out" of node:test.
 */
export async function within<T>(
  ms: number,
  promise: Promise<T>,
  what: string,
  detail: () => string = () => '',
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const more = detail();
      reject(new Error(`timed out after ${ms} ms waiting for ${what}${more ? `\n${more}` : ''}`));
    }, ms);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
