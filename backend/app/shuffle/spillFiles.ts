import {
  closeSync,
  mkdirSync,
  openSync,
  readdirSync,
  readlinkSync,
  readSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { parseLines } from './blocks.js';

/**
 * A task's temporary shuffle files (Spark's temp_shuffle_* / temp_local_* blocks): map-side
 * spills, reduce-side aggregation and sort runs, and blocks fetched to disk, all named
 * `temp_<kind>_<taskId>_<random>` in the executor's spill folder. The task deletes its own as it
 * ends; a task killed (its thread ended under it) or lost cannot, so the executor deletes what is
 * left of a task by its id once it has ended (removeTaskTempFiles), and the worker removes the
 * application's local dir when the application ends.
 */
export type TempKind = 'shuffle' | 'agg' | 'sort' | 'fetch';

export function spillDirOf(shuffleDir: string): string {
  return join(shuffleDir, 'spill');
}

export function tempFile(dir: string, kind: TempKind, taskId: number): string {
  mkdirSync(dir, { recursive: true });
  return join(dir, `temp_${kind}_${taskId}_${Math.random().toString(36).slice(2, 10)}`);
}

/**
 * Deletes what is left of a task's temporary files, once the task has ended; how many there
 * were. A thread ended under its task (killed, out of memory) leaves the files it had open open:
 * descriptors belong to the process, and nothing in the thread closes them. Those are closed
 * too (found in /proc/self/fd, on Linux), or the disk space of the files deleted stays taken
 * until the executor exits.
 */
export function removeTaskTempFiles(dir: string, taskId: number): number {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return 0;
  }
  const mine = new RegExp(`^temp_[a-z]+_${taskId}_`);
  const paths = new Set(names.filter((name) => mine.test(name)).map((name) => join(dir, name)));
  if (paths.size === 0) return 0;
  closeDescriptorsOf(paths);
  for (const p of paths) rmSync(p, { force: true });
  return paths.size;
}

function closeDescriptorsOf(paths: ReadonlySet<string>): void {
  let fds: string[];
  try {
    fds = readdirSync('/proc/self/fd');
  } catch {
    return;
  }
  for (const fd of fds) {
    let target: string;
    try {
      target = readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      continue;
    }
    if (!paths.has(target)) continue;
    try {
      closeSync(Number(fd));
    } catch {
      // Closed meanwhile.
    }
  }
}

/**
 * Newline-terminated JSON records appended to a file, written a buffer at a time. Synchronous:
 * it runs in a task thread, inside the push of a record (which cannot await), and a spill is
 * the whole of that thread's work while it lasts.
 */
export class RecordFileWriter {
  private readonly fd: number;
  private parts: string[] = [];
  private held = 0;
  private closed = false;
  /** Bytes written so far (flushed or not). */
  bytes = 0;

  constructor(
    readonly path: string,
    private readonly bufferChars = 256 * 1024,
  ) {
    this.fd = openSync(path, 'w');
  }

  write(line: string): void {
    this.parts.push(line);
    this.held += line.length + 1;
    if (this.held >= this.bufferChars) this.flush();
  }

  /** Writes a block of ready text (lines already newline-terminated). */
  writeText(text: string): void {
    this.flush();
    this.bytes += writeSync(this.fd, text);
  }

  flush(): void {
    if (this.parts.length === 0) return;
    this.bytes += writeSync(this.fd, `${this.parts.join('\n')}\n`);
    this.parts = [];
    this.held = 0;
  }

  /** Closes it once (a file descriptor closed twice might close another file's, reused). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.flush();
    closeSync(this.fd);
  }
}

/**
 * Reads a file's records [start, end) a chunk at a time: at most one chunk and one unfinished
 * line are in memory. A chunk is cut after its last newline byte, which never falls inside a
 * UTF-8 sequence, so each text decoded is whole.
 */
export class RecordFileReader {
  private readonly fd: number;
  private pos: number;
  private carry: Buffer = Buffer.alloc(0);
  private done = false;
  private readonly chunk: Buffer;

  constructor(
    readonly path: string,
    start = 0,
    private readonly end = Number.POSITIVE_INFINITY,
    chunkBytes = 1024 * 1024,
  ) {
    this.fd = openSync(path, 'r');
    this.pos = start;
    this.chunk = Buffer.allocUnsafe(chunkBytes);
  }

  /** The next records, some at least, each with its text's length; none once the range is read. */
  nextBatch(each: (record: unknown, length: number) => void): number {
    while (!this.done) {
      const want = Math.min(this.chunk.length, this.end - this.pos);
      const got = want > 0 ? readSync(this.fd, this.chunk, 0, want, this.pos) : 0;
      this.pos += got;
      if (got === 0) {
        this.done = true;
        if (this.carry.length > 0) {
          throw new Error(`${this.path} ends inside a record (truncated)`);
        }
        return 0;
      }
      const bytes = this.carry.length
        ? Buffer.concat([this.carry, this.chunk.subarray(0, got)])
        : this.chunk.subarray(0, got);
      const last = bytes.lastIndexOf(0x0a);
      if (last < 0) {
        this.carry = Buffer.from(bytes);
        continue;
      }
      this.carry = Buffer.from(bytes.subarray(last + 1));
      const { records } = parseLines(bytes.toString('utf8', 0, last + 1), each);
      if (records > 0) return records;
    }
    return 0;
  }

  /** Every record left; how many. */
  readAll(each: (record: unknown, length: number) => void): number {
    let n = 0;
    for (let got = this.nextBatch(each); got > 0; got = this.nextBatch(each)) n += got;
    return n;
  }

  close(): void {
    closeSync(this.fd);
  }
}

/** Reads and closes: every record of the file's range. */
export function readRecordFile(
  path: string,
  each: (record: unknown, length: number) => void,
  start = 0,
  end = Number.POSITIVE_INFINITY,
): number {
  const r = new RecordFileReader(path, start, end);
  try {
    return r.readAll(each);
  } finally {
    r.close();
  }
}
