import {
  closeSync,
  createReadStream,
  createWriteStream,
  existsSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip, gunzipSync } from 'node:zlib';
import {
  bumpLogGeneration,
  forgetLogGeneration,
  gzKey,
  knownGzSize,
  rememberGzSize,
  removedBytesFile,
} from '../../logs/logGenerations.js';
import {
  filesToDelete,
  GZIP_SUFFIX,
  nextRolloverTime,
  type RollingStrategy,
  rolledSuffix,
  sortRolledOver,
} from '../../logs/rolledFiles.js';
import { getLogger } from '../../util/log.js';

const log = getLogger('RollingFileAppender');

/** wick.executor.logs.rolling.*: how a worker rolls its executors' and drivers' output. */
export interface RollingConf {
  strategy: RollingStrategy;
  /** Rolled files kept (the newest); 0 or less keeps all, as Spark's -1 default. */
  maxRetainedFiles: number;
  compress: boolean;
}

/**
 * Spark's RollingFileAppender: the child's output arrives through a pipe and is appended to the
 * active file, which is renamed to `stdout--<time>` and started afresh when the policy says
 * (size: before the bytes that would pass the limit — a chunk is split, so that no file passes it;
 * time: the first write after each interval, as Spark), compressed to `.gz` afterwards if asked,
 * and the oldest rolled files deleted past maxRetainedFiles, their bytes counted in a file beside
 * the log (rolledFiles.ts: offsets stay valid). Writes are synchronous: bytes reach the file in the
 * order they came, and each roll happens within one turn of the event loop, so a reader in this
 * process sees it through the log's generation (logGenerations.ts), never half done.
 */
export class RollingFileAppender {
  private fd: number;
  /** Bytes in the active file. */
  private written: number;
  private nextRollAt: number;
  private removed: number;
  private readonly active: string;
  private readonly compressions = new Set<Promise<void>>();
  private failed = false;
  private closed = false;

  constructor(
    private readonly dir: string,
    private readonly name: 'stdout' | 'stderr',
    private readonly conf: RollingConf,
    append: boolean,
    private readonly now: () => number = Date.now,
  ) {
    this.active = join(dir, name);
    this.fd = openSync(this.active, append ? 'a' : 'w');
    this.written = append ? statSync(this.active).size : 0;
    this.removed = readRemoved(join(dir, removedBytesFile(name)));
    this.nextRollAt = this.scheduleNext();
    bumpLogGeneration(this.active);
  }

  /** Appends `data`, rolling first (or in between) when the policy says. Never throws. */
  write(data: Buffer | string): void {
    if (this.closed) return;
    let buf = typeof data === 'string' ? Buffer.from(data) : data;
    try {
      const s = this.conf.strategy;
      if (s.kind === 'time' && this.written > 0 && this.now() >= this.nextRollAt) this.roll();
      while (buf.length > 0) {
        let n = buf.length;
        if (s.kind === 'size') {
          if (this.written >= s.maxBytes) this.roll();
          n = Math.min(n, s.maxBytes - this.written);
        }
        let off = 0;
        while (off < n) off += writeSync(this.fd, buf, off, n - off);
        this.written += n;
        buf = buf.subarray(n);
      }
    } catch (err) {
      // A full disk must not take the worker down; say it once per file.
      if (!this.failed) log.error(`Writing ${this.active} failed; output is being lost`, err);
      this.failed = true;
    }
  }

  /** Closes the active file; resolves once compressions under way are done. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    closeSync(this.fd);
    await Promise.all([...this.compressions]);
    forgetLogGeneration(this.active);
  }

  private scheduleNext(): number {
    const s = this.conf.strategy;
    return s.kind === 'time'
      ? nextRolloverTime(this.now(), s.intervalMs)
      : Number.POSITIVE_INFINITY;
  }

  /** Spark's rollover: close, move to the rolled name, open afresh, delete the oldest. */
  private roll(): void {
    const s = this.conf.strategy;
    const suffix = rolledSuffix(this.now(), s.kind === 'size' ? 'millisecond' : s.pattern);
    closeSync(this.fd);
    const target = this.uniqueName(`${this.name}${suffix}`);
    renameSync(this.active, join(this.dir, target));
    this.fd = openSync(this.active, 'w');
    this.written = 0;
    this.nextRollAt = this.scheduleNext();
    bumpLogGeneration(this.active);
    log.info(`Rolled over ${this.active} to ${target}`);
    if (this.conf.compress) this.compress(target);
    this.deleteOldFiles();
  }

  /** Spark's name, or `<name>--<i>` when it is taken (a second roll within its resolution). */
  private uniqueName(wanted: string): string {
    const taken = (n: string) =>
      existsSync(join(this.dir, n)) || existsSync(join(this.dir, n + GZIP_SUFFIX));
    if (!taken(wanted)) return wanted;
    for (let i = 0; i < 10_000; i++) if (!taken(`${wanted}--${i}`)) return `${wanted}--${i}`;
    throw new Error(`No free name to roll ${this.active} over to (${wanted})`);
  }

  /**
   * Compresses a rolled file beside it (a hidden temporary name no reader lists), then, in one
   * turn, puts the `.gz` in its place.
   */
  private compress(name: string): void {
    const src = join(this.dir, name);
    const tmp = join(this.dir, `.${name}${GZIP_SUFFIX}.tmp`);
    const done = pipeline(createReadStream(src), createGzip(), createWriteStream(tmp))
      .then(() => {
        if (!existsSync(src)) {
          // Deleted meanwhile (past maxRetainedFiles): its bytes are counted already.
          unlinkSync(tmp);
          return;
        }
        const size = statSync(src).size;
        const gz = src + GZIP_SUFFIX;
        renameSync(tmp, gz);
        rememberGzSize(gzKey(statSync(gz)), size);
        unlinkSync(src);
        bumpLogGeneration(this.active);
      })
      .catch((err: Error) => {
        log.warn(`Compressing ${src} failed; it stays uncompressed: ${err.message}`);
        try {
          unlinkSync(tmp);
        } catch {}
      })
      .finally(() => this.compressions.delete(done));
    this.compressions.add(done);
  }

  /** Spark's deleteOldFiles, counting what goes so that offsets keep their meaning. */
  private deleteOldFiles(): void {
    const rolled = sortRolledOver(readdirSync(this.dir), this.name);
    const old = filesToDelete(rolled, this.conf.maxRetainedFiles);
    if (old.length === 0) return;
    for (const name of old) {
      const path = join(this.dir, name);
      this.removed += uncompressedSize(path, name.endsWith(GZIP_SUFFIX));
      unlinkSync(path);
      log.info(`Deleted executor log file ${path}`);
    }
    const file = join(this.dir, removedBytesFile(this.name));
    writeFileSync(`${file}.tmp`, String(this.removed));
    renameSync(`${file}.tmp`, file);
    bumpLogGeneration(this.active);
  }
}

function readRemoved(path: string): number {
  try {
    const n = Number(readFileSync(path, 'utf8').trim());
    return Number.isSafeInteger(n) && n >= 0 ? n : 0;
  } catch {
    return 0;
  }
}

/** The size of a rolled file's content: known for what this process compressed, else counted. */
function uncompressedSize(path: string, gz: boolean): number {
  const st = statSync(path);
  if (!gz) return st.size;
  return knownGzSize(gzKey(st)) ?? gunzipSync(readFileSync(path)).length;
}
