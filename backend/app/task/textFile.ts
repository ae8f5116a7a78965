import { open } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, isAbsolute, join } from 'node:path';
import { isAddedFileName } from '../WickFiles.js';

/** A textFile partition's lines, read from its split of the file (runTask's textFile source). */

/**
 * The file a textFile source reads: an absolute path as it is, and a bare name as the file the
 * application added under that name (wick submit --files, addFile), in this executor's copy — the
 * driver sends an added file so, since its own path means nothing on another host.
 */
function textFilePath(path: string, filesDir: string | undefined): string {
  if (isAbsolute(path)) return path;
  if (isAddedFileName(path) && filesDir !== undefined) return join(filesDir, path);
  throw new Error(
    `textFile: ${JSON.stringify(path)} is neither an absolute path nor the name of a file the application added${filesDir === undefined ? ' (and this executor keeps no added files)' : ''}: give the driver an absolute path every worker can read, or add the file (wick submit --files, wc.addFile) and name it`,
  );
}

/**
 * Opens a textFile's file, saying what to do when this host does not have it: the driver saw it
 * (it sized the splits), so it is most likely a file of the driver's machine only — or, for an
 * added file named by its name, one this executor was not told of.
 */
async function openSplit(
  path: string,
  filesDir: string | undefined,
): Promise<Awaited<ReturnType<typeof open>>> {
  const file = textFilePath(path, filesDir);
  try {
    return await open(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    if (file !== path) {
      throw new Error(
        `textFile: the added file ${path} is not in ${filesDir} on ${hostname()}, where this executor keeps the application's added files; the driver added it (wick submit --files or wc.addFile) before this job, so this executor should have fetched it before the task ran`,
      );
    }
    throw new Error(
      `textFile: ${path} does not exist on ${hostname()}, where this executor runs; the driver found it, so it may exist on the driver's machine only. Put it where every worker reads it at the same path (a shared file system), or ship it with wick submit --files ${path} (or wc.addFile('${path}')) and read it by its name: textFile('${basename(path)}') in the driver, WickFiles.get('${basename(path)}') in a task.`,
    );
  }
}

/**
 * The lines that start in [start, end), as Hadoop's line reader splits a file: a split that does
 * not begin the file skips its first (partial) line, and every split reads on past its end to
 * finish its last line. Each line therefore belongs to exactly one split.
 */
export async function emitLines(
  path: string,
  filesDir: string | undefined,
  start: number,
  end: number,
  push: (v: unknown) => void,
  finish: { stopped: () => boolean },
): Promise<void> {
  const fh = await openSplit(path, filesDir);
  try {
    const chunk = Buffer.allocUnsafe(1 << 20);
    let pos = start;
    let carry: Buffer = Buffer.alloc(0);
    let lineStart = start;
    let skipFirst = start > 0;
    if (skipFirst) {
      // Does a line start exactly at `start`? Only if the byte before it is a newline.
      const prev = Buffer.alloc(1);
      await fh.read(prev, 0, 1, start - 1);
      if (prev[0] === 0x0a) skipFirst = false;
    }
    for (;;) {
      const { bytesRead } = await fh.read(chunk, 0, chunk.length, pos);
      const buf = carry.length
        ? Buffer.concat([carry, chunk.subarray(0, bytesRead)])
        : chunk.subarray(0, bytesRead);
      let from = 0;
      for (;;) {
        const nl = buf.indexOf(0x0a, from);
        if (nl < 0) break;
        if (skipFirst) skipFirst = false;
        else {
          if (lineStart >= end) return;
          let line = buf.toString('utf8', from, nl);
          if (line.endsWith('\r')) line = line.slice(0, -1);
          push(line);
          if (finish.stopped()) return;
        }
        lineStart += nl - from + 1;
        from = nl + 1;
      }
      carry = Buffer.from(buf.subarray(from));
      pos += bytesRead;
      if (bytesRead === 0) {
        if (carry.length > 0 && !skipFirst && lineStart < end) push(carry.toString('utf8'));
        return;
      }
    }
  } finally {
    await fh.close();
  }
}
