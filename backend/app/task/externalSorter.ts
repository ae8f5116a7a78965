import { rmSync } from 'node:fs';
import { RECORD_OVERHEAD } from '../shuffle/sizeEstimate.js';
import { RecordFileReader, RecordFileWriter, tempFile } from '../shuffle/spillFiles.js';
import { noteSpill } from './metrics.js';
import type { SpillContext } from './spillContext.js';

/** Bytes read from each run at a time while merging: many runs cost little memory. */
const RUN_CHUNK = 64 * 1024;

/**
 * sortByKey's reduce side (Spark's ExternalSorter with an ordering, no aggregation): records are
 * buffered; once their estimated size passes the threshold the buffer is sorted and written as
 * a run, and it starts again. At the end the runs and the sorted rest in memory are merged
 * through a heap, each run read a chunk at a time. Equal keys come out oldest run first.
 */
export class ExternalSorter {
  private buffer: unknown[] = [];
  private bytes = 0;
  private readonly runs: string[] = [];

  constructor(
    private readonly compare: (a: unknown, b: unknown) => number,
    private readonly ctx: SpillContext,
  ) {}

  /** A record, with the length of its JSON text (its size estimate). */
  insert(r: unknown, length: number): void {
    this.buffer.push(r);
    this.bytes += length + RECORD_OVERHEAD;
    if (this.bytes >= this.ctx.threshold) this.spill();
  }

  get spilled(): boolean {
    return this.runs.length > 0;
  }

  /** Every record in order; `emit` returns true to stop. Deletes the runs. */
  drain(emit: (r: unknown) => boolean): boolean {
    const cmp = this.compare;
    this.buffer.sort(cmp);
    if (this.runs.length === 0) {
      for (const r of this.buffer) if (emit(r)) return true;
      return false;
    }
    const readers: RecordFileReader[] = [];
    try {
      // Sources: the runs, then the rest in memory; each a queue of records read ahead.
      const queues: unknown[][] = [];
      const heads: number[] = [];
      for (const path of this.runs) {
        readers.push(new RecordFileReader(path, 0, Number.POSITIVE_INFINITY, RUN_CHUNK));
        queues.push([]);
        heads.push(0);
      }
      queues.push(this.buffer);
      heads.push(0);
      this.buffer = [];
      const refill = (s: number): boolean => {
        if ((heads[s] as number) < (queues[s] as unknown[]).length) return true;
        const reader = readers[s];
        if (!reader) return false;
        const q: unknown[] = [];
        reader.nextBatch((r) => q.push(r));
        queues[s] = q;
        heads[s] = 0;
        return q.length > 0;
      };
      const head = (s: number) => (queues[s] as unknown[])[heads[s] as number];
      // A binary heap of sources by their head record, then by source (older runs first).
      const less = (a: number, b: number) => {
        const c = cmp(head(a), head(b));
        return c < 0 || (c === 0 && a < b);
      };
      const heap: number[] = [];
      const up = (i: number) => {
        while (i > 0) {
          const p = (i - 1) >> 1;
          if (!less(heap[i] as number, heap[p] as number)) return;
          [heap[i], heap[p]] = [heap[p] as number, heap[i] as number];
          i = p;
        }
      };
      const down = (i: number) => {
        for (;;) {
          const l = 2 * i + 1;
          const r = l + 1;
          let m = i;
          if (l < heap.length && less(heap[l] as number, heap[m] as number)) m = l;
          if (r < heap.length && less(heap[r] as number, heap[m] as number)) m = r;
          if (m === i) return;
          [heap[i], heap[m]] = [heap[m] as number, heap[i] as number];
          i = m;
        }
      };
      for (let s = 0; s < queues.length; s++) {
        if (refill(s)) {
          heap.push(s);
          up(heap.length - 1);
        }
      }
      while (heap.length > 0) {
        const s = heap[0] as number;
        const r = head(s);
        heads[s] = (heads[s] as number) + 1;
        if (emit(r)) return true;
        if (refill(s)) down(0);
        else {
          const last = heap.pop() as number;
          if (heap.length > 0) {
            heap[0] = last;
            down(0);
          }
        }
      }
      return false;
    } finally {
      for (const r of readers) r.close();
      this.remove();
    }
  }

  remove(): void {
    for (const p of this.runs) rmSync(p, { force: true });
    this.runs.length = 0;
  }

  private spill(): void {
    this.buffer.sort(this.compare);
    const w = new RecordFileWriter(tempFile(this.ctx.dir, 'sort', this.ctx.taskId));
    this.runs.push(w.path);
    try {
      for (const r of this.buffer) w.write(JSON.stringify(r));
    } finally {
      w.close();
    }
    noteSpill(this.ctx.metrics, this.bytes, w.bytes);
    this.buffer = [];
    this.bytes = 0;
  }
}
