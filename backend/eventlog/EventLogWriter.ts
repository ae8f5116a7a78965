/**
 * Writes an application's events as JSON lines, one event a line, in Spark's layouts
 * (eventLogFiles.ts). Written so that a crash leaves a readable prefix: lines are written whole,
 * a buffer of them at a time (at `bufferBytes`, or a second after the first unwritten one), and a
 * compressed part is flushed to a complete gzip block at each write (Z_SYNC_FLUSH), so that
 * everything written before a crash decompresses.
 *
 * Writing never throws into the application: the first error (a full disk, a removed folder) is
 * kept in `error`, reported once through `onError`, and later events are dropped, as Spark's
 * EventLoggingListener logs and goes on.
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, rename, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { constants, createGzip, type Gzip } from 'node:zlib';
import { eventJson } from './eventJson.js';
import {
  appStatusName,
  checkAppIdForFile,
  rollingDirName,
  rollingPartName,
  singleFileName,
} from './eventLogFiles.js';

export interface EventLogWriterOptions {
  /** The event log dir (wick.eventLog.dir); made if missing. */
  dir: string;
  appId: string;
  /** gzip each file (wick.eventLog.compress). */
  compress: boolean;
  /** Roll to a new part past this many bytes of JSON (wick.eventLog.rolling.*); unset: one file. */
  rollAtBytes?: number;
  /** Bytes of lines kept before they are written (wick.eventLog.buffer.kb). */
  bufferBytes?: number;
  /** How long a line may wait in the buffer (ms). */
  flushIntervalMs?: number;
  onError?: (err: Error) => void;
}

const DEFAULT_BUFFER_BYTES = 100 * 1024;
const DEFAULT_FLUSH_INTERVAL_MS = 1_000;

export class EventLogWriter {
  /** The log's path: the single file (final name), or the rolling folder. */
  readonly path: string;
  /** The first write error, after which nothing more is written. */
  error: Error | undefined;
  /** Bytes of JSON lines accepted so far (before compression). */
  bytes = 0;
  /** Parts begun so far (1 for a single file). */
  parts = 1;

  private pending: string[] = [];
  private pendingBytes = 0;
  private partBytes = 0;
  private chain: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private part: Part;
  private readonly bufferBytes: number;
  private readonly flushIntervalMs: number;

  private constructor(
    private readonly options: EventLogWriterOptions,
    first: Part,
  ) {
    this.part = first;
    this.bufferBytes = options.bufferBytes ?? DEFAULT_BUFFER_BYTES;
    this.flushIntervalMs = options.flushIntervalMs ?? DEFAULT_FLUSH_INTERVAL_MS;
    this.path =
      options.rollAtBytes === undefined
        ? join(options.dir, singleFileName(options.appId, options.compress, false))
        : join(options.dir, rollingDirName(options.appId));
  }

  /** Creates the log's first file (in progress); refuses a log that exists already. */
  static async start(options: EventLogWriterOptions): Promise<EventLogWriter> {
    const { dir, appId, compress, rollAtBytes } = options;
    checkAppIdForFile(appId);
    if (rollAtBytes !== undefined && !(rollAtBytes >= 1)) {
      throw new Error(`rollAtBytes must be at least 1, got ${rollAtBytes}`);
    }
    await mkdir(dir, { recursive: true });
    const final =
      rollAtBytes === undefined
        ? join(dir, singleFileName(appId, compress, false))
        : join(dir, rollingDirName(appId));
    const inProgress = rollAtBytes === undefined ? `${final}.inprogress` : final;
    for (const p of new Set([final, inProgress])) {
      if (await exists(p)) {
        throw new Error(`the event log ${p} exists already: remove it, or give another dir`);
      }
    }
    let first: Part;
    if (rollAtBytes === undefined) {
      first = await Part.open(join(dir, singleFileName(appId, compress, true)), compress);
    } else {
      await mkdir(final);
      await writeFile(join(final, appStatusName(appId, true)), '', { flag: 'wx' });
      first = await Part.open(join(final, rollingPartName(appId, 1, compress)), compress);
    }
    return new EventLogWriter(options, first);
  }

  /** Adds one event (a JSON value); written with the next buffer. */
  write(event: unknown): void {
    if (this.closed) throw new Error(`the event log ${this.path} is closed`);
    if (this.error) return;
    const line = `${eventJson(event)}\n`;
    const n = Buffer.byteLength(line);
    const rollAt = this.options.rollAtBytes;
    if (rollAt !== undefined && this.partBytes > 0 && this.partBytes + n > rollAt) {
      this.enqueue(this.takePending(), true);
      this.partBytes = 0;
    }
    this.pending.push(line);
    this.pendingBytes += n;
    this.partBytes += n;
    this.bytes += n;
    if (this.pendingBytes >= this.bufferBytes) this.enqueue(this.takePending(), false);
    else this.timer ??= setTimeout(() => void this.flush(), this.flushIntervalMs).unref();
  }

  /** Writes what is buffered; resolves once it is with the operating system. */
  flush(): Promise<void> {
    this.enqueue(this.takePending(), false);
    return this.chain;
  }

  /** Writes the rest and gives the log its final name (no `.inprogress`). */
  async close(): Promise<void> {
    if (this.closed) return this.chain;
    this.closed = true;
    await this.flush();
    this.chain = this.chain.then(async () => {
      if (this.error) return;
      await this.part.end();
      const { dir, appId, compress, rollAtBytes } = this.options;
      if (rollAtBytes === undefined) {
        await rename(join(dir, singleFileName(appId, compress, true)), this.path);
      } else {
        await rename(
          join(this.path, appStatusName(appId, true)),
          join(this.path, appStatusName(appId, false)),
        );
      }
    });
    this.chain = this.chain.catch((err: Error) => this.fail(err));
    return this.chain;
  }

  private takePending(): string {
    clearTimeout(this.timer);
    this.timer = undefined;
    const data = this.pending.join('');
    this.pending = [];
    this.pendingBytes = 0;
    return data;
  }

  private enqueue(data: string, roll: boolean): void {
    this.chain = this.chain
      .then(async () => {
        if (this.error) return;
        if (data) await this.part.write(data);
        if (roll) {
          await this.part.end();
          this.parts++;
          const { appId, compress } = this.options;
          this.part = await Part.open(
            join(this.path, rollingPartName(appId, this.parts, compress)),
            compress,
          );
        }
      })
      .catch((err: Error) => this.fail(err));
  }

  private fail(err: Error): void {
    if (this.error) return;
    this.error = err;
    this.pending = [];
    this.options.onError?.(err);
  }
}

/** One file of the log: plain, or gzip flushed to a whole block at every write. */
class Part {
  private constructor(
    private readonly file: WriteStream,
    private readonly gzip: Gzip | undefined,
  ) {}

  /** Resolves once the file exists (a reader then sees the application in progress). */
  static async open(path: string, compress: boolean): Promise<Part> {
    // 'wx': a part is always new; an existing one is another writer's.
    const file = createWriteStream(path, { flags: 'wx' });
    await new Promise<void>((resolve, reject) => {
      file.once('open', () => resolve());
      file.once('error', reject);
    });
    const gzip = compress ? createGzip() : undefined;
    gzip?.pipe(file);
    return new Part(file, gzip);
  }

  async write(data: string): Promise<void> {
    const { gzip, file } = this;
    if (gzip) {
      gzip.write(data);
      await new Promise<void>((resolve) => gzip.flush(constants.Z_SYNC_FLUSH, () => resolve()));
    }
    await new Promise<void>((resolve, reject) => {
      const onError = (err: Error) => reject(err);
      file.once('error', onError);
      const done = () => {
        file.off('error', onError);
        resolve();
      };
      // The gzip output is in the file stream's queue once flushed: wait for it to be written.
      if (gzip) {
        if (file.writableNeedDrain) file.once('drain', done);
        else file.write('', done);
      } else file.write(data, (err) => (err ? reject(err) : done()));
    });
  }

  async end(): Promise<void> {
    const closed = new Promise<void>((resolve, reject) => {
      this.file.once('close', () => resolve());
      this.file.once('error', reject);
    });
    if (this.gzip) this.gzip.end();
    else this.file.end();
    await closed;
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}
