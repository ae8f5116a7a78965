import { join, sep } from 'node:path';

/**
 * Where a shipped file goes under `root`: its path comes from a peer, so a path that would leave
 * the root (absolute, `..`), or that names nothing (empty or `.` segments), is refused by name.
 */
export function shippedPathUnder(root: string, path: string): string {
  const segments = path.split('/');
  const bad = segments.find((s) => s === '' || s === '.' || s === '..' || s.includes('\\'));
  if (bad !== undefined || path.includes('\0')) {
    throw new Error(
      `Refusing shipped file path "${path}": expected a relative path of / separated names without ".", ".." or empty segments`,
    );
  }
  return join(root, ...segments);
}

/** A path relative to a root as it travels: `/`-separated on every platform. */
export function toShippedPath(relative: string): string {
  return relative.split(sep).join('/');
}
