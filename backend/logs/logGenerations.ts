/**
 * What the worker's rolling appenders tell the log readers in the same process. A roll (rename
 * the active file, open a new one, delete the oldest, swap a compressed copy in) is made of
 * several file-system steps; the appender takes them in one turn of the event loop and then bumps
 * the log's generation. A reader that lists and opens a log's files on the thread pool checks the
 * generation before and after: unchanged, no roll happened in between, so the files it opened are
 * one consistent log; changed, it opens them again.
 *
 * Every generation is drawn from one counter and never given twice, and an appender takes one
 * when it opens its log: a reader that opened a log before it rolled must see a change even after
 * the appender has closed and forgotten the log (a per-log count would fall back to 0 then, and a
 * follower that had not yet looked would take the rolled file for the whole log).
 */
const generations = new Map<string, number>();
let lastGeneration = 0;

/** The generation of the log whose active file is `activePath`; 0 when no appender holds it. */
export function logGeneration(activePath: string): number {
  return generations.get(activePath) ?? 0;
}

/** An appender opened the log, or rolled it: its files are not what they were. */
export function bumpLogGeneration(activePath: string): void {
  generations.set(activePath, ++lastGeneration);
}

/** The appender is done with a log: forget it (its files no longer change). */
export function forgetLogGeneration(activePath: string): void {
  generations.delete(activePath);
}

/**
 * Uncompressed sizes of compressed rolled files, by device, inode and compressed size: the
 * appender knows each one it wrote, and a reader counts a file it does not know once.
 */
const gzSizes = new Map<string, number>();
const MAX_REMEMBERED = 100_000;

export function gzKey(st: { dev: number; ino: number; size: number }): string {
  return `${st.dev}:${st.ino}:${st.size}`;
}

export function rememberGzSize(key: string, uncompressed: number): void {
  if (gzSizes.size >= MAX_REMEMBERED) gzSizes.clear();
  gzSizes.set(key, uncompressed);
}

export function knownGzSize(key: string): number | undefined {
  return gzSizes.get(key);
}

/** The file beside a log that counts the bytes of its rolled files deleted so far. */
export function removedBytesFile(active: string): string {
  return `.${active}-removed-bytes`;
}
