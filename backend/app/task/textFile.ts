import { open } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename } from 'node:path';

/** A textFile partition's lines, read from its split of the file (runTask's textFile source). */

/**
 * Opens a textFile's file, saying what to do when this host does not have it: the driver saw it
 * (it sized the splits), so it is most likely a file of the driver's machine only.
 */
async function openSplit(path: string): Promise<Awaited<ReturnType<typeof open>>> {
  try {
    return await open(path, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    throw new Error(
      `textFile: ${path} does not exist on ${hostname()}, where this executor runs; the driver found it, so it may exist on the driver's machine only. Put it where every worker reads it at the same path (a shared file system), or ship it with wick submit --files ${path} (or wc.addFile) and read WickFiles.get('${basename(path)}') in the task.`,
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
  start: number,
  end: number,
  push: (v: unknown) => void,
  finish: { stopped: () => boolean },
): Promise<void> {
  const fh = await openSplit(path);
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
