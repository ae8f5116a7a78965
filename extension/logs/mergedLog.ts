/**
 * One application's logs as one text: the driver's and every executor's, each line tagged with
 * where it came from (`[driver] …`, `[exec 0] …`, `[exec 0 stderr] …`).
 *
 * The order is the order of arrival here, in the extension: Wick's log lines carry no timestamp
 * finer than a second (and a program's own prints carry none), and the processes' clocks are not
 * one clock, so arrival is the one order that is total and honest. What was written before the
 * view opened arrives at once, as each source's backlog: it comes first, source by source, in the
 * order the sources were added (the driver, then the executors by id). A line is placed when its
 * newline arrives; until then its start waits, per source, so that two sources never interleave
 * inside a line. A source that ends flushes its unfinished last line.
 *
 * Bounded: past `maxLines` the oldest lines go, and the text says how many. Pure: unit-tested.
 */
export class MergedLog {
  private lines: string[] = [];
  private dropped = 0;
  private readonly pending = new Map<string, Buffer>();
  private readonly decoder = new TextDecoder('utf-8');

  constructor(private readonly maxLines = 20_000) {}

  /** Bytes of source `tag`, in its order; returns whether whole lines were added. */
  add(tag: string, bytes: Uint8Array): boolean {
    const before = this.pending.get(tag);
    const all = before ? Buffer.concat([before, bytes]) : Buffer.from(bytes);
    const cut = all.lastIndexOf(10);
    if (cut < 0) {
      this.pending.set(tag, all);
      return false;
    }
    // Cut at a newline, never inside a UTF-8 sequence: the rest waits for its end.
    const complete = this.decoder.decode(all.subarray(0, cut));
    const rest = all.subarray(cut + 1);
    if (rest.length) this.pending.set(tag, Buffer.from(rest));
    else this.pending.delete(tag);
    for (const line of complete.split('\n')) this.push(tag, line.replace(/\r$/, ''));
    return true;
  }

  /** Source `tag` ended (its process exited, or its worker is gone): its last line, and a note. */
  end(tag: string, note?: string): boolean {
    const rest = this.pending.get(tag);
    this.pending.delete(tag);
    let added = false;
    if (rest?.length) {
      this.push(tag, this.decoder.decode(rest));
      added = true;
    }
    if (note) {
      this.push(tag, `(${note})`);
      added = true;
    }
    return added;
  }

  get lineCount(): number {
    return this.lines.length;
  }

  text(): string {
    const head = this.dropped
      ? `[… ${this.dropped} earlier lines dropped: the view keeps the last ${this.maxLines}]\n`
      : '';
    return head + this.lines.map((l) => `${l}\n`).join('');
  }

  private push(tag: string, line: string): void {
    this.lines.push(`[${tag}] ${line}`);
    if (this.lines.length > this.maxLines) {
      const over = this.lines.length - this.maxLines;
      this.lines.splice(0, over);
      this.dropped += over;
    }
  }
}

/** The tag of a source: `driver`, `exec 3`, with ` stderr` for a stderr. */
export function sourceTag(
  source: { driverId: string } | { execId: number },
  stream: 'stdout' | 'stderr',
): string {
  const who = 'driverId' in source ? 'driver' : `exec ${source.execId}`;
  return stream === 'stdout' ? who : `${who} stderr`;
}
