import { rmSync } from 'node:fs';
import { hashKey, KeyMap } from '../shuffle/keys.js';
import { SampledSize } from '../shuffle/sizeEstimate.js';
import { RecordFileWriter, readRecordFile, tempFile } from '../shuffle/spillFiles.js';
import { noteSpill } from './metrics.js';
import type { SpillContext } from './spillContext.js';

/** Sub-files of one spilling level. */
export const FANOUT = 16;
/**
 * Levels of sub-files at most: past them a map no longer spills (only keys that share every
 * level's sub-hash remain together then: in practice a single key, whose combiner must fit in
 * memory, as in Spark).
 */
export const MAX_LEVELS = 4;

type Entry = [unknown, unknown];

/**
 * A reducer's per-key aggregation that spills (Spark's ExternalAppendOnlyMap, as a grace hash
 * join rather than Spark's sorted spills and merge: no sort, and any key type needs only the
 * hash and equality every executor already has). Entries go to a KeyMap; once its estimated size
 * passes the threshold every entry is written to one of FANOUT sub-files by a hash of its key of
 * this level's own (not the reducer's hash, which all of this reducer's keys share), and the map
 * starts again. At the end, with spills, what is in memory is spilled too and each sub-file is
 * aggregated alone by a map of the next level, which may spill in turn: every key's combiners
 * end in one sub-file, merged with mergeCombiners, so each key comes out once. At most one map
 * is in memory at a time, each bounded by the threshold.
 */
export class ExternalAppendOnlyMap {
  private readonly map = new KeyMap<Entry>();
  private readonly size = new SampledSize();
  private subFiles: RecordFileWriter[] | undefined;

  constructor(
    private readonly createCombiner: (v: unknown) => unknown,
    private readonly mergeValue: (c: unknown, v: unknown) => unknown,
    private readonly mergeCombiners: (a: unknown, b: unknown) => unknown,
    private readonly ctx: SpillContext,
    private readonly level = 0,
  ) {}

  insert(k: unknown, v: unknown): void {
    let e = this.map.get(k);
    if (e) e[1] = this.mergeValue(e[1], v);
    else {
      e = [k, this.createCombiner(v)];
      this.map.set(k, e);
    }
    if (!this.size.due()) return;
    this.size.sample(e);
    const estimate = this.size.estimate(this.map.size);
    if (estimate >= this.ctx.threshold && this.level < MAX_LEVELS) this.spill(estimate);
  }

  /** Whether it has spilled (tests). */
  get spilled(): boolean {
    return this.subFiles !== undefined;
  }

  /**
   * Every key once with its combiner; `emit` returns true to stop. Deletes its sub-files as
   * each is read, and all of them should it stop or fail.
   */
  drain(emit: (e: Entry) => boolean): boolean {
    if (!this.subFiles) {
      for (const e of this.map.values()) if (emit(e)) return true;
      return false;
    }
    try {
      if (this.map.size > 0) this.spill(this.size.estimate(this.map.size));
      for (const w of this.subFiles) w.close();
      for (const w of this.subFiles) {
        const next = new ExternalAppendOnlyMap(
          (c) => c,
          this.mergeCombiners,
          this.mergeCombiners,
          this.ctx,
          this.level + 1,
        );
        try {
          readRecordFile(w.path, (r) => {
            const [k, c] = r as Entry;
            next.insert(k, c);
          });
          rmSync(w.path, { force: true });
          if (next.drain(emit)) return true;
        } finally {
          next.remove();
        }
      }
      return false;
    } finally {
      this.remove();
    }
  }

  /** Deletes its sub-files (closing those still open). */
  remove(): void {
    for (const w of this.subFiles ?? []) {
      w.close();
      rmSync(w.path, { force: true });
    }
  }

  private spill(estimate: number): void {
    this.subFiles ??= Array.from(
      { length: FANOUT },
      () => new RecordFileWriter(tempFile(this.ctx.dir, 'agg', this.ctx.taskId), 64 * 1024),
    );
    const files = this.subFiles;
    const before = files.reduce((n, w) => n + w.bytes, 0);
    for (const e of this.map.values())
      (files[subPartition(e[0], this.level)] as RecordFileWriter).write(JSON.stringify(e));
    for (const w of files) w.flush();
    noteSpill(this.ctx.metrics, estimate, files.reduce((n, w) => n + w.bytes, 0) - before);
    this.map.clear();
  }
}

/** Which sub-file a key goes to at a level: its hash mixed with the level (murmur3's fmix32). */
export function subPartition(k: unknown, level: number): number {
  let x = (hashKey(k) ^ Math.imul(level + 1, 0x9e3779b9)) >>> 0;
  x = Math.imul(x ^ (x >>> 16), 0x85ebca6b);
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35);
  x ^= x >>> 16;
  return (x >>> 0) % FANOUT;
}
