import { type FSWatcher, watch } from 'node:fs';
import { dirname } from 'node:path';
import type { LogSource } from '../../logs/logFiles.js';
import { type LogSet, openLogSet } from '../../logs/logSet.js';
import { getLogger } from '../../util/log.js';

const log = getLogger('LogFollower');

const CHUNK_BYTES = 1024 * 1024;
/** fs.watch can miss an event under load; a slow re-check makes a missed one cost a delay, not bytes. */
const RECHECK_MS = 500;

export interface FollowSink {
  /** `data` is valid during the call only (copy what you keep). */
  chunk(offset: number, data: Buffer): void;
  end(totalSize: number, reason: string): void;
  /** False while the receiver is behind; the follower then waits for drained(). */
  ready(): boolean;
  drained(): Promise<void>;
}

/**
 * Follows one log from an offset: reads what is there, then what is appended as it is written
 * (woken by fs.watch on the log's directory, by the runner's exit, and by a slow re-check), each
 * chunk with its offset, so the receiver can check it lost and repeated nothing. A rolled log
 * (wick.executor.logs.rolling.*) is followed across its files: offsets run over the whole log
 * (logSet.ts), and when a roll has happened the follower opens the log's files again and goes on
 * at the same offset — in the next file. Ends when stopped, or once the process is done and the
 * log drained. No file-tailing package was used: the ones on npm emit lines, and this needs bytes
 * and their exact offsets.
 */
export class LogFollower {
  private set: LogSet | undefined;
  readonly path: string;
  private watcher: FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  private pumping = false;
  private again = false;
  private stopped = false;
  /**
   * One read buffer for the whole follow: the sink encodes each chunk before it returns, and a
   * new megabyte per read was most of what the worker's garbage collector did.
   */
  private readonly buf = Buffer.allocUnsafe(CHUNK_BYTES);

  /** `set` is open already (openLogSet checked what it is); the follower closes it. */
  constructor(
    set: LogSet,
    private readonly workDir: string,
    private readonly source: LogSource,
    private offset: number,
    private readonly sink: FollowSink,
    private readonly sourceDone: () => boolean,
  ) {
    this.set = set;
    this.path = set.path;
  }

  async start(): Promise<void> {
    // The directory, not the file: a roll renames the file and creates the next one there.
    try {
      this.watcher = watch(dirname(this.path), () => this.poke());
      this.watcher.on('error', () => {});
    } catch {
      // Gone since it was opened: the re-check below still reads the open files.
    }
    this.timer = setInterval(() => this.poke(), RECHECK_MS);
    this.timer.unref();
    this.poke();
  }

  /** Reads whatever is new; call when the log may have grown or the process has exited. */
  poke(): void {
    if (this.stopped) return;
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = true;
    void this.pump().finally(() => {
      this.pumping = false;
      if (this.again && !this.stopped) {
        this.again = false;
        this.poke();
      }
    });
  }

  stop(reason: string): void {
    if (this.stopped) return;
    this.stopped = true;
    this.watcher?.close();
    if (this.timer) clearInterval(this.timer);
    const set = this.set;
    this.set = undefined;
    void set?.close();
    this.sink.end(this.offset, reason);
  }

  private async pump(): Promise<void> {
    try {
      for (;;) {
        if (this.stopped || !this.set) return;
        if (!this.sink.ready()) await this.sink.drained();
        if (this.stopped || !this.set) return;
        // Ask before reading: a process that is done has written its last byte.
        const done = this.sourceDone();
        // Also before reading: bytes written after a roll are in a file these handles lack.
        const stale = this.set.stale;
        const r = await this.set.readAt(this.offset, this.buf);
        if (this.stopped) return;
        if (r.data.length > 0) {
          // Past maxRetainedFiles, bytes not yet read can be deleted: the offset then jumps, so
          // that the receiver sees the gap rather than a seam.
          this.sink.chunk(r.offset, r.data);
          this.offset = r.offset + r.data.length;
          continue;
        }
        if (stale) {
          await this.reopen();
          continue;
        }
        if (done) this.stop('process exited');
        return;
      }
    } catch (err) {
      log.warn(`Following ${this.path} failed`, err);
      this.stop(`read failed: ${(err as Error).message}`);
    }
  }

  private async reopen(): Promise<void> {
    const next = await openLogSet(this.workDir, this.source);
    const old = this.set;
    if (this.stopped) {
      await next.close();
      return;
    }
    this.set = next;
    await old?.close();
  }
}
