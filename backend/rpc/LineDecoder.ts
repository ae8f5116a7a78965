import { isAscii } from 'node:buffer';

/**
 * Splits a byte stream into newline-delimited frames. JSON.stringify never emits a raw newline,
 * so a newline always ends a frame; a `\r` before it is dropped and blank lines are skipped.
 *
 * A frame longer than `maxBytes` is never buffered whole: its bytes are counted and dropped up to
 * the next newline, then `onOversize` reports the size, and the stream carries on with the next
 * frame. That way one huge frame costs no memory and loses nothing else. Its first bytes
 * (`OVERSIZE_HEAD_BYTES`) are kept and passed along too, so that the id at its start can be
 * answered.
 */
export const OVERSIZE_HEAD_BYTES = 256;

/** Frames from this size on are checked for being pure ASCII before they are decoded. */
const ASCII_CHECK_BYTES = 16 * 1024;
/** The buffer that holds unfinished frames is kept between frames up to this size. */
const KEEP_HOLD_BYTES = 2 * 1024 * 1024;

/**
 * UTF-8 text of buf[from, to). A large frame that is all ASCII (base64 log data, say) is decoded
 * as Latin-1 instead, which gives the same string several times faster.
 */
function decode(buf: Buffer, from: number, to: number): string {
  if (to - from >= ASCII_CHECK_BYTES && isAscii(buf.subarray(from, to))) {
    return buf.toString('latin1', from, to);
  }
  return buf.toString('utf8', from, to);
}

export class LineDecoder {
  /**
   * The bytes of an unfinished frame, copied (the socket may reuse a chunk's memory once push
   * returns) into one buffer that is reused from frame to frame: a frame of megabytes arrives in
   * dozens of socket chunks, and a new Buffer for each, then one more to join them, was most of
   * the garbage a log follower made.
   */
  private hold: Buffer | undefined;
  private pendingBytes = 0;
  private discarding = false;
  private discardedBytes = 0;
  private discardedHead = '';

  constructor(
    private readonly maxBytes: number,
    private readonly onFrame: (frame: string) => void,
    private readonly onOversize: (bytes: number, head: string) => void,
  ) {}

  /** Bytes held for an unfinished frame (0 while discarding one that is too large). */
  get bufferedBytes(): number {
    return this.pendingBytes;
  }

  push(chunk: Buffer): void {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, start);
      if (nl === -1) {
        this.keep(chunk, start, chunk.length);
        return;
      }
      this.finish(chunk, start, nl);
      start = nl + 1;
    }
  }

  private keep(chunk: Buffer, from: number, to: number): void {
    const len = to - from;
    if (len === 0) return;
    if (this.discarding) {
      this.discardedBytes += len;
      return;
    }
    if (this.pendingBytes + len > this.maxBytes) {
      this.discarding = true;
      this.discardedBytes = this.pendingBytes + len;
      this.discardedHead = this.head(chunk, from, to);
      this.release();
      return;
    }
    this.append(chunk, from, to);
  }

  /** Empties the held frame; a large buffer goes back to the allocator rather than staying. */
  private release(): void {
    this.pendingBytes = 0;
    if (this.hold && this.hold.length > KEEP_HOLD_BYTES) this.hold = undefined;
  }

  private append(chunk: Buffer, from: number, to: number): void {
    const need = this.pendingBytes + to - from;
    if (!this.hold || this.hold.length < need) {
      const grown = Buffer.allocUnsafe(
        Math.min(this.maxBytes, Math.max(need, 2 * (this.hold?.length ?? 0), 1024)),
      );
      this.hold?.copy(grown, 0, 0, this.pendingBytes);
      this.hold = grown;
    }
    chunk.copy(this.hold, this.pendingBytes, from, to);
    this.pendingBytes = need;
  }

  private finish(chunk: Buffer, from: number, to: number): void {
    const len = to - from;
    if (this.discarding) {
      const total = this.discardedBytes + len;
      const head = this.discardedHead;
      this.discarding = false;
      this.discardedBytes = 0;
      this.discardedHead = '';
      this.onOversize(total, head);
      return;
    }
    const total = this.pendingBytes + len;
    if (total > this.maxBytes) {
      const head = this.head(chunk, from, to);
      this.release();
      this.onOversize(total, head);
      return;
    }
    let text: string;
    if (this.pendingBytes === 0) {
      text = decode(chunk, from, to);
    } else {
      this.append(chunk, from, to);
      text = decode(this.hold as Buffer, 0, total);
      this.release();
    }
    if (text.length > 0 && text.charCodeAt(text.length - 1) === 0x0d) text = text.slice(0, -1);
    if (text.trim().length === 0) return;
    this.onFrame(text);
  }

  /** The first OVERSIZE_HEAD_BYTES of the held bytes followed by chunk[from, to). */
  private head(chunk: Buffer, from: number, to: number): string {
    const parts: Buffer[] = [];
    let n = 0;
    const held = this.hold?.subarray(0, this.pendingBytes) ?? Buffer.alloc(0);
    for (const b of [held, chunk.subarray(from, to)]) {
      if (n >= OVERSIZE_HEAD_BYTES) break;
      const part = b.subarray(0, OVERSIZE_HEAD_BYTES - n);
      parts.push(part);
      n += part.length;
    }
    return Buffer.concat(parts, n).toString('utf8');
  }
}
