import { Duplex } from 'node:stream';

/**
 * Two in-memory streams joined like the two ends of a socket (Node 20 has no stream.duplexPair):
 * what one writes, the other reads, one chunk per write, or per writev as a kernel would coalesce
 * it. Ending one side ends the other's reading; with allowHalfOpen off, as for net.Socket, that
 * end then finishes too and both close. Destroying one side is a reset: the other ends as well.
 */
export function duplexPair(): [Duplex, Duplex] {
  const a = new End();
  const b = new End();
  a.other = b;
  b.other = a;
  return [a, b];
}

class End extends Duplex {
  other!: End;
  /** Chunks written as one writev each, which a test can count. */
  writes = 0;
  private eof = false;

  constructor() {
    super({ allowHalfOpen: false });
  }

  override _read(): void {}

  override _write(chunk: Buffer, _enc: BufferEncoding, done: (err?: Error | null) => void): void {
    this.writes++;
    this.other.deliver(chunk);
    done();
  }

  override _writev(chunks: Array<{ chunk: Buffer }>, done: (err?: Error | null) => void): void {
    this.writes++;
    this.other.deliver(Buffer.concat(chunks.map((c) => c.chunk)));
    done();
  }

  override _final(done: (err?: Error | null) => void): void {
    this.other.finishReading();
    done();
  }

  override _destroy(err: Error | null, done: (err?: Error | null) => void): void {
    this.other.finishReading();
    this.finishReading();
    done(err);
  }

  private deliver(chunk: Buffer): void {
    if (!this.eof && !this.destroyed) this.push(chunk);
  }

  private finishReading(): void {
    if (this.eof || this.destroyed) return;
    this.eof = true;
    this.push(null);
  }
}

/** What a test reads on its end: one parsed frame per line. */
export type Frame = {
  jsonrpc?: string;
  id?: number | string | null;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown> | null;
  error?: { code: number; message: string; data?: unknown };
};

/**
 * The test's end of a pair, played by hand: frames in arrival order, each awaited by `take`
 * (woken by the data itself, not by polling), and raw bytes written as given.
 */
export class RawEnd {
  readonly frames: Frame[] = [];
  /** Chunks received, to check what arrived together. */
  readonly chunks: string[] = [];
  readonly closed: Promise<void>;
  private rest = '';
  private isClosed = false;
  private wake: (() => void) | undefined;

  constructor(readonly stream: Duplex) {
    stream.on('data', (chunk: Buffer) => {
      const text = chunk.toString();
      this.chunks.push(text);
      const lines = (this.rest + text).split('\n');
      this.rest = lines.pop() ?? '';
      for (const line of lines) if (line.trim()) this.frames.push(JSON.parse(line) as Frame);
      this.wake?.();
    });
    stream.on('error', () => {});
    this.closed = new Promise((resolve) =>
      stream.once('close', () => {
        this.isClosed = true;
        this.wake?.();
        resolve();
      }),
    );
  }

  /** The next frame that matches (default: any), removed from `frames`; rejects on close. */
  async take(match: (f: Frame) => boolean = () => true): Promise<Frame> {
    for (;;) {
      const i = this.frames.findIndex(match);
      if (i !== -1) return this.frames.splice(i, 1)[0] as Frame;
      if (this.isClosed) throw new Error('RawEnd: closed before a matching frame came');
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
  }

  /** Writes one frame per value (a string as it is), all in one chunk. */
  send(...values: unknown[]): void {
    this.write(values.map((v) => `${typeof v === 'string' ? v : JSON.stringify(v)}\n`).join(''));
  }

  write(data: string | Buffer): void {
    this.stream.write(data);
  }
}
