import type { Writable } from 'node:stream';
import { FrameBuffers } from './FrameBuffers.js';
import { splicedNotification } from './splicedFrames.js';

/**
 * Frames onto any writable stream (vscode-jsonrpc's MessageWriter): one JSON value and a newline
 * each, none over `maxBytes`.
 *
 * Writes go through a stream corked until the end of the tick, so that the replies and asks made
 * in one turn of the event loop (64 asks in flight are answered in a handful of chunks) leave in
 * one writev rather than one syscall each. Bytes and their order are unchanged.
 */
export class FrameWriter {
  /** True while writes of this tick are held for one writev. */
  private corked = false;
  /** Buffers for spliced frames, made on the first one. */
  private frameBuffers: FrameBuffers | undefined;

  constructor(
    private readonly stream: Writable,
    readonly maxBytes: number,
  ) {}

  /**
   * Writes `payload` as one frame and returns undefined; or, writing nothing, returns the frame's
   * size in bytes when that is over `maxBytes`. What an oversize frame means (an ask that fails
   * here, a reply replaced by an error) is the caller's to decide.
   */
  write(payload: unknown): number | undefined {
    const text = JSON.stringify(payload);
    // A UTF-8 byte is at most 3 per UTF-16 unit; only measure bytes when it could be too big.
    if (text.length * 3 > this.maxBytes) {
      const bytes = Buffer.byteLength(text);
      if (bytes > this.maxBytes) return bytes;
    }
    this.writeCoalesced(`${text}\n`);
    return undefined;
  }

  /**
   * Writes a frame of our own making without the size check: the handshake's and error replies,
   * which are short and awaited by the peer (a tiny wick.rpc.message.maxSize must not swallow
   * the one error that explains it).
   */
  writeUnchecked(payload: object): void {
    this.writeCoalesced(`${JSON.stringify(payload)}\n`);
  }

  /**
   * Writes a notification whose params.message gets `field` = `base64` spliced in as bytes rather
   * than through JSON.stringify (splicedFrames.ts): for megabytes of log data. Returns as write().
   */
  writeSpliced(
    method: string,
    params: { message: object },
    field: string,
    base64: string,
  ): number | undefined {
    this.frameBuffers ??= new FrameBuffers();
    const pool = this.frameBuffers;
    let buf: Buffer | undefined;
    const frame = splicedNotification(method, params, field, base64, (size) => {
      buf = pool.take(size);
      return buf;
    });
    if (frame.length - 1 > this.maxBytes) {
      pool.give(buf as Buffer);
      return frame.length - 1;
    }
    // The stream calls back once it has written the frame (or failed to): then it is free.
    this.writeCoalesced(frame, () => pool.give(buf as Buffer));
    return undefined;
  }

  /** Sends what is corked now rather than at the end of the tick. */
  flush(): void {
    if (!this.corked) return;
    this.corked = false;
    this.stream.uncork();
  }

  /** Bytes written but not yet handed on (to the OS, for a socket): how far behind the peer is. */
  get backlog(): number {
    return this.stream.writableLength;
  }

  /** Resolves once the stream's buffer has drained, or the stream is gone. */
  drained(): Promise<void> {
    const stream = this.stream;
    if (!stream.writableNeedDrain || stream.destroyed) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        stream.off('drain', done);
        stream.off('close', done);
        resolve();
      };
      stream.once('drain', done);
      stream.once('close', done);
    });
  }

  private writeCoalesced(data: string | Buffer, written?: () => void): void {
    if (!this.corked) {
      this.corked = true;
      this.stream.cork();
      process.nextTick(uncork, this);
    }
    this.stream.write(data, written);
  }
}

/** A module function rather than a closure per tick. */
function uncork(writer: FrameWriter): void {
  writer.flush();
}
