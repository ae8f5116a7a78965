/**
 * One log file's bytes as far as the editor has them: a window [start, end) of the file, grown
 * at the end by followed chunks and at the front by "load earlier". Chunks are placed by their
 * file offset, so an overlap is skipped and nothing is shown twice; a gap is refused (and
 * reported) rather than shown as if contiguous. Pure: unit-tested without vscode.
 */
export class LogBuffer {
  private data = Buffer.alloc(0);
  start = 0;
  ended: string | undefined;

  get end(): number {
    return this.start + this.data.length;
  }

  /** The first bytes read: `data` at `offset`. */
  reset(offset: number, data: Buffer): void {
    this.start = offset;
    this.data = Buffer.from(data);
  }

  /** Appends a followed chunk; returns false when it adds nothing, throws on a gap. */
  append(offset: number, chunk: Buffer): boolean {
    if (offset > this.end)
      throw new Error(`Log gap: have bytes up to ${this.end}, got a chunk at ${offset}`);
    const skip = this.end - offset;
    if (skip >= chunk.length) return false;
    this.data = Buffer.concat([this.data, chunk.subarray(skip)]);
    return true;
  }

  /** Prepends earlier bytes `data` at `offset` (which must reach this window's start). */
  prepend(offset: number, data: Buffer): boolean {
    if (offset >= this.start) return false;
    if (offset + data.length < this.start) throw new Error(`Log gap before ${this.start}`);
    this.data = Buffer.concat([data.subarray(0, this.start - offset), this.data]);
    this.start = offset;
    return true;
  }

  end_(reason: string): void {
    this.ended = reason;
  }

  /** The document text: a note on what is above, the bytes, and a note on how it ended. */
  text(): string {
    const head =
      this.start > 0
        ? `[… ${this.start} earlier bytes — run "Wick: Load Earlier Log Output" to show them]\n`
        : '';
    const tail =
      this.ended !== undefined
        ? `${this.data.length && this.data[this.data.length - 1] !== 10 ? '\n' : ''}[${this.ended}]\n`
        : '';
    return head + this.data.toString('utf8') + tail;
  }

  bytes(): Buffer {
    return this.data;
  }
}
