import { isAbsolute } from 'node:path';
import { SandboxConf } from '../conf/sandbox.js';

/** The most folders a window's local cluster shows its applications (workspace folders). */
export const MAX_READ_ONLY_PATHS = 32;
const MAX_PATH_LENGTH = 4096;

/**
 * The `--conf` entries of the window's local cluster beyond its defaults: the workspace folders,
 * shown read-only at their own paths inside every confined executor and driver, so that a job
 * run from the editor reads the files of the project it was written in (an input in the
 * workspace, as a user of `wick submit` on their own machine expects), and nothing else of the
 * user's: their other files, other applications' dirs and the cluster's secret stay out of sight.
 * A path the setting cannot carry (not absolute, a comma in it, too long, past the count) is left
 * out and said so in `skipped`.
 */
export function localClusterConf(readOnlyPaths: readonly string[] | undefined): {
  conf: string[];
  skipped: string[];
} {
  const shown: string[] = [];
  const skipped: string[] = [];
  const given: readonly unknown[] = Array.isArray(readOnlyPaths) ? readOnlyPaths : [];
  if (readOnlyPaths !== undefined && !Array.isArray(readOnlyPaths))
    skipped.push(`${JSON.stringify(readOnlyPaths).slice(0, 200)}: not a list of folders`);
  if (given.length > MAX_READ_ONLY_PATHS)
    skipped.push(
      `${given.length - MAX_READ_ONLY_PATHS} folders past the first ${MAX_READ_ONLY_PATHS}`,
    );
  for (const p of given.slice(0, MAX_READ_ONLY_PATHS)) {
    const why =
      typeof p !== 'string' || !isAbsolute(p)
        ? 'not an absolute path'
        : p.length > MAX_PATH_LENGTH
          ? `longer than ${MAX_PATH_LENGTH} characters`
          : p.includes(',')
            ? `a comma in it (${SandboxConf.readOnlyPaths.key} is comma-separated)`
            : undefined;
    if (why) skipped.push(`${JSON.stringify(String(p).slice(0, 200))}: ${why}`);
    else shown.push(p as string);
  }
  return {
    conf: shown.length > 0 ? [`${SandboxConf.readOnlyPaths.key}=${shown.join(',')}`] : [],
    skipped,
  };
}
