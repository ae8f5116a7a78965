import { type FSWatcher, watch } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import type { OpenLog } from '../../logs/logFiles.js';
import { getLogger } from '../../util/log.js';

const log = getLogger('LogFollower');

const CHUNK_BYTES = 1024 * 1024;
/** fs.watch can miss an event under load; a slow re-check makes a missed one cost a delay, not bytes. */
const RECHECK_MS = 500;

export interface FollowSink {
  /** `data` is the follower's read buffer: valid during the call only (copy what you keep). */
  chunk(offset: number, data: Buffer): void;
  end(totalSize: number, reason: string): void;
  /** False while the receiver is behind; the follower then waits for drained(). */
  ready(): boolean;
  drained(): Promise<void>;
}

/**
 * Follows one log file from an offset: reads what is there, then what is appended as it is
 * written (woken by fs.watch, by the runner's exit, and by a slow re-check), each chunk with its
 * offset, so the receiver can check it lost and repeated nothing. Ends when stopped, or once the
 * process is done and the file drained. No file-tailing package was used: the ones on npm emit
 * lines, and this needs bytes and their exact offsets.
 */
export class LogFollower {
  private fh: FileHandle | undefined;
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

  /** `log` is open already (openLogFile checked what it is); the follower closes it. */
  constructor(
    log: OpenLog,
    private offset: number,
    private readonly sink: FollowSink,
    private readonly sourceDone: () => boolean,
  ) {
    this.fh = log.handle;
    this.path = log.path;
  }

  async start(): Promise<void> {
    // Watching by path only wakes the reader: the bytes always come from the open file.
    try {
      this.watcher = watch(this.path, () => this.poke());
      this.watcher.on('error', () => {});
    } catch {
      // Gone or renamed since it was opened: the re-check below still reads the open file.
    }
    this.timer = setInterval(() => this.poke(), RECHECK_MS);
    this.timer.unref();
    this.poke();
  }

  /** Reads whatever is new; call when the file may have grown or the process has exited. */
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
    const fh = this.fh;
    this.fh = undefined;
    void fh?.close().catch(() => {});
    this.sink.end(this.offset, reason);
  }

  private async pump(): Promise<void> {
    const fh = this.fh;
    if (!fh) return;
    try {
      for (;;) {
        if (this.stopped) return;
        if (!this.sink.ready()) await this.sink.drained();
        if (this.stopped) return;
        // Ask before reading: a process that is done has written its last byte.
        const done = this.sourceDone();
        const { bytesRead } = await fh.read(this.buf, 0, CHUNK_BYTES, this.offset);
        if (this.stopped) return;
        if (bytesRead > 0) {
          this.sink.chunk(this.offset, this.buf.subarray(0, bytesRead));
          this.offset += bytesRead;
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
}
