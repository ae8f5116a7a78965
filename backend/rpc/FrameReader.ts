import type { Readable } from 'node:stream';
import { LineDecoder } from './LineDecoder.js';

/** Where a reader's frames go: the handshake phase first, then the session it opened. */
export interface FrameTarget {
  onFrame(text: string): void;
  /** A frame over the size limit, dropped unread but for its first bytes (see LineDecoder). */
  onOversize(bytes: number, head: string): void;
}

/**
 * Newline-delimited frames from any readable stream (vscode-jsonrpc's MessageReader).
 *
 * The target may change between two frames of one chunk, and that is what lets a handshake hand
 * over without holding anything back: LineDecoder delivers a chunk's frames one at a time,
 * synchronously, and each goes to the target of that moment. So when the frame that ends the
 * handshake opens a session, the frames after it in the same chunk reach that session, in order.
 */
export class FrameReader {
  private target: FrameTarget | undefined;
  private readonly decoder: LineDecoder;

  constructor(
    private readonly stream: Readable,
    maxBytes: number,
  ) {
    this.decoder = new LineDecoder(
      maxBytes,
      (frame) => this.target?.onFrame(frame),
      (bytes, head) => this.target?.onOversize(bytes, head),
    );
  }

  /** Sends what is read from now on to `target`; the stream is only read once there is one. */
  listen(target: FrameTarget): void {
    const first = this.target === undefined;
    this.target = target;
    if (first) {
      this.stream.on('data', (chunk: Buffer | string) =>
        this.decoder.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk),
      );
    }
  }

  /** Bytes held for a frame not finished yet. */
  get bufferedBytes(): number {
    return this.decoder.bufferedBytes;
  }
}
