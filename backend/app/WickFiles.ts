import { join } from 'node:path';

/**
 * Where a file added with `wick submit --files` or `wc.addFile` is (Spark's SparkFiles): in a
 * task, its copy on the executor's host; in the driver, the file that was added. The lookup is
 * kept on globalThis because a task thread may load the library apart from the module that sets
 * it (dist/task-worker.cjs and the application's `wick`).
 */
const WHERE = Symbol.for('wick.files');

type Lookup = { root: string | undefined; get: (name: string) => string | undefined };

function lookup(): Lookup | undefined {
  return (globalThis as { [WHERE]?: Lookup })[WHERE];
}

function install(l: Lookup): void {
  (globalThis as { [WHERE]?: Lookup })[WHERE] = l;
}

/** Executors: the added files are in `dir` under their names. */
export function setFilesDir(dir: string | undefined): void {
  if (dir === undefined) return;
  install({ root: dir, get: (name) => join(dir, name) });
}

/** The driver: the added files where they were added from. */
export function setDriverFiles(files: ReadonlyMap<string, string>): void {
  install({ root: undefined, get: (name) => files.get(name) });
}

/**
 * Whether `name` can be an added file's name (the added path's last part): not empty, no path
 * separator, not `.` or `..`. A textFile path of this form names the added file (runTask.ts).
 */
export function isAddedFileName(name: string): boolean {
  return (
    name !== '' && !name.includes('/') && !name.includes('\\') && name !== '.' && name !== '..'
  );
}

export const WickFiles = {
  /** The local path of an added file, by its name (the added path's last part). */
  get(name: string): string {
    if (!isAddedFileName(name)) {
      throw new Error(
        `WickFiles.get expects the name of an added file (e.g. "data.csv"), got "${name}"`,
      );
    }
    const path = lookup()?.get(name);
    if (path === undefined) {
      throw new Error(
        `WickFiles.get("${name}"): no such file was added; add it with wick submit --files ${name} or wc.addFile(path) before the job that reads it`,
      );
    }
    return path;
  },

  /** The folder that holds the added files on this executor (undefined in the driver). */
  getRootDirectory(): string | undefined {
    return lookup()?.root;
  },
};
