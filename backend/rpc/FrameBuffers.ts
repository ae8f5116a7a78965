/**
 * A few large buffers for outgoing spliced frames (splicedFrames.ts), each taken back once the
 * socket has written it. A log follow sends a 1.4 MB frame per megabyte of log; a new buffer for
 * each kept the worker's garbage collector busier than anything else it did for the follow.
 */
export class FrameBuffers {
  private readonly free: Buffer[] = [];

  constructor(
    /** How many idle buffers are kept. */
    private readonly keep = 4,
    /** Buffers are made at least this large, so that one fits any chunk of a follow. */
    private readonly minBytes = 1536 * 1024,
    /** Frames larger than this get a buffer of their own, never kept. */
    private readonly maxBytes = 4 * 1024 * 1024,
  ) {}

  /** A buffer of at least `size` bytes, to give back once nothing reads it any more. */
  take(size: number): Buffer {
    if (size > this.maxBytes) return Buffer.allocUnsafe(size);
    const i = this.free.findIndex((b) => b.length >= size);
    if (i !== -1) return this.free.splice(i, 1)[0] as Buffer;
    return Buffer.allocUnsafe(Math.max(size, this.minBytes));
  }

  give(buf: Buffer): void {
    if (buf.length <= this.maxBytes && this.free.length < this.keep) this.free.push(buf);
  }

  /** Idle buffers held (for tests). */
  get idle(): number {
    return this.free.length;
  }
}
