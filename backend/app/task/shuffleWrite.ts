import { closeSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { mkdir, open, rename } from 'node:fs/promises';
import { crc32 } from 'node:zlib';
import type { MapStatus } from '../../protocol/shuffle.js';
import type { PartitionAction, TaskDescription, TaskMetrics } from '../../protocol/task.js';
import { shuffleFiles } from '../shuffle/blocks.js';
import { KeyMap } from '../shuffle/keys.js';
import { partitionFunction } from '../shuffle/partitioners.js';
import { RECORD_OVERHEAD, SampledSize } from '../shuffle/sizeEstimate.js';
import { spillDirOf, tempFile } from '../shuffle/spillFiles.js';
import type { TaskPlace } from './compile.js';
import { noteSpill } from './metrics.js';
import { type Combiners, combinersOf } from './shuffleRead.js';

type ShuffleWrite = Extract<PartitionAction, { kind: 'shuffleWrite' }>;
type Fn = (...args: unknown[]) => unknown;

/** The spill threshold when the executor was given none (wick.shuffle.spill.memoryThreshold's default). */
export const DEFAULT_SPILL_THRESHOLD = 32 * 1024 * 1024;

/**
 * A ShuffleMapStage task's end (Spark's SortShuffleWriter, without the sort: reducers read their
 * block whole): records go to their reducer's bucket, combined per key first when the shuffle
 * combines map-side (reduceByKey, aggregateByKey, combineByKey), then the buckets are written to
 * one data file and its index, and the task's result is the MapStatus the driver tracks.
 *
 * Once the buffered records' estimated size passes the spill threshold (Spark's ExternalSorter
 * with spark.shuffle.spill), they are written by reducer to a spill file (combined first) and
 * the buffer starts again; at the end each reducer's block is its segments of every spill, then
 * what is left in memory. Combiners of one key in several spills are not merged here: the
 * reducer merges the combiners of every map output with mergeCombiners anyway, so a key may
 * appear in a block once per spill. The spill files are deleted as the task ends.
 */
export function shuffleWriter(
  a: ShuffleWrite,
  task: TaskDescription,
  place: TaskPlace,
  fn: (spec: NonNullable<ShuffleWrite['aggregator']>['mergeValue']) => Fn,
  metrics: TaskMetrics = {},
): { push: (v: unknown) => void; result: () => Promise<MapStatus>; stopped: () => boolean } {
  const n = a.numPartitions;
  const partition = partitionFunction(a.partitioner, n, task.partition);
  const combine: Combiners | undefined =
    a.aggregator && a.mapSideCombine ? combinersOf(a.aggregator, fn) : undefined;
  const threshold = place.spillThreshold ?? DEFAULT_SPILL_THRESHOLD;
  const spills = new MapSpills(place, task.taskId, metrics);
  const byKey = new KeyMap<[unknown, unknown]>();
  const strings = byKey.strings;
  const mergeValue = combine?.mergeValue ?? ((c: unknown) => c);
  const createCombiner = combine?.createCombiner ?? ((v: unknown) => v);
  const size = new SampledSize();
  let buckets: string[][] = newBuckets(n);
  let buffered = 0;
  let records = 0;
  const bucketsOfCombiners = () => {
    const out = newBuckets(n);
    for (const e of byKey.values()) (out[partition(e)] as string[]).push(JSON.stringify(e));
    records += byKey.size;
    return out;
  };
  const push = combine
    ? (r: unknown) => {
        const [k, v] = pairOf(r);
        // String keys (a word count's) straight from their own map: KeyMap's dispatch on the
        // key's type was a tenth of a WordCount map task.
        const str = typeof k === 'string';
        let e = str ? strings.get(k) : byKey.get(k);
        if (e) e[1] = mergeValue(e[1], v);
        else {
          e = [k, createCombiner(v)];
          if (str) strings.set(k, e);
          else byKey.set(k, e);
        }
        if (!size.due()) return;
        size.sample(e);
        const estimate = size.estimate(byKey.size);
        if (estimate < threshold) return;
        spills.spill(bucketsOfCombiners(), estimate);
        byKey.clear();
      }
    : (r: unknown) => {
        if (a.partitioner.kind !== 'roundRobin') pairOf(r);
        const line = JSON.stringify(r);
        (buckets[partition(r)] as string[]).push(line);
        records++;
        buffered += line.length + RECORD_OVERHEAD;
        if (buffered < threshold) return;
        spills.spill(buckets, buffered);
        buckets = newBuckets(n);
        buffered = 0;
      };
  return {
    push,
    stopped: () => false,
    result: async () => {
      try {
        if (combine) buckets = bucketsOfCombiners();
        const status = await writeMapOutput(
          a.shuffleId,
          task.partition,
          buckets,
          place,
          records,
          spills,
        );
        metrics.shuffleWrite = {
          bytesWritten: status.sizes.reduce((x, y) => x + y, 0),
          recordsWritten: records,
        };
        return status;
      } finally {
        spills.remove();
      }
    },
  };
}

function newBuckets(n: number): string[][] {
  return Array.from({ length: n }, () => []);
}

/** A map task's spill files: each holds a segment per reducer, one after another. */
export class MapSpills {
  readonly files: { path: string; lengths: number[] }[] = [];

  constructor(
    private readonly place: TaskPlace,
    private readonly taskId: number,
    private readonly metrics: TaskMetrics,
  ) {}

  spill(buckets: string[][], estimate: number): void {
    if (!this.place.shuffleDir)
      throw new Error('This executor has no shuffle directory: it cannot spill');
    const path = tempFile(spillDirOf(this.place.shuffleDir), 'shuffle', this.taskId);
    const lengths: number[] = [];
    this.files.push({ path, lengths });
    const fd = openSync(path, 'w');
    let total = 0;
    try {
      for (const lines of buckets) {
        const written = lines.length === 0 ? 0 : writeSync(fd, `${lines.join('\n')}\n`);
        lengths.push(written);
        total += written;
      }
    } finally {
      closeSync(fd);
    }
    noteSpill(this.metrics, estimate, total);
  }

  /**
   * Copies reducer `i`'s segment of every spill to `out` at `at`; the bytes copied and the CRC-32
   * continued over them.
   */
  copySegments(i: number, out: number, at: number, crc: number): { bytes: number; crc: number } {
    const chunk = Buffer.allocUnsafe(Math.min(COPY_CHUNK, this.largestSegment(i)));
    let bytes = 0;
    for (const f of this.files) {
      let from = 0;
      for (let j = 0; j < i; j++) from += f.lengths[j] as number;
      const length = f.lengths[i] as number;
      if (length === 0) continue;
      const fd = openSync(f.path, 'r');
      try {
        for (let done = 0; done < length; ) {
          const got = readSync(fd, chunk, 0, Math.min(chunk.length, length - done), from + done);
          if (got === 0) throw new Error(`Spill file ${f.path} is shorter than it was written`);
          const part = chunk.subarray(0, got);
          writeSync(out, part, 0, got, at + bytes);
          crc = crc32(part, crc);
          done += got;
          bytes += got;
        }
      } finally {
        closeSync(fd);
      }
    }
    return { bytes, crc };
  }

  private largestSegment(i: number): number {
    let most = 1;
    for (const f of this.files) most = Math.max(most, f.lengths[i] as number);
    return most;
  }

  remove(): void {
    for (const f of this.files) rmSync(f.path, { force: true });
    this.files.length = 0;
  }

  get count(): number {
    return this.files.length;
  }
}

const COPY_CHUNK = 1024 * 1024;

function pairOf(r: unknown): [unknown, unknown] {
  if (!Array.isArray(r) || r.length !== 2) {
    throw new Error(
      `A pair operation expects [key, value] elements, got ${truncate(JSON.stringify(r))}`,
    );
  }
  return r as [unknown, unknown];
}

function truncate(s: string | undefined): string {
  if (s === undefined) return 'undefined';
  return s.length > 200 ? `${s.slice(0, 200)}…` : s;
}

async function writeMapOutput(
  shuffleId: number,
  mapId: number,
  buckets: string[][],
  place: TaskPlace,
  records: number,
  spills?: MapSpills,
): Promise<MapStatus> {
  const dir = place.shuffleDir;
  if (!dir || !place.shuffleLocation || !place.executorId)
    throw new Error('This executor has no shuffle directory: it cannot run a shuffle map task');
  await mkdir(dir, { recursive: true });
  const files = shuffleFiles(dir, shuffleId, mapId);
  const tmp = `.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  const sizes: number[] = [];
  const crc32s: number[] = [];
  const index = Buffer.alloc(8 * (buckets.length + 1));
  let offset = 0;
  if (spills && spills.count > 0) {
    // Spilled: each block is its segments of every spill, then the rest from memory.
    const out = openSync(files.data + tmp, 'w');
    try {
      for (const [i, lines] of buckets.entries()) {
        const copied = spills.copySegments(i, out, offset, 0);
        const rest = lines.length === 0 ? Buffer.alloc(0) : Buffer.from(`${lines.join('\n')}\n`);
        if (rest.length > 0) writeSync(out, rest, 0, rest.length, offset + copied.bytes);
        const size = copied.bytes + rest.length;
        sizes.push(size);
        crc32s.push(crc32(rest, copied.crc) >>> 0);
        offset += size;
        index.writeBigUInt64BE(BigInt(offset), 8 * (i + 1));
      }
    } finally {
      closeSync(out);
    }
  } else {
    const out = await open(files.data + tmp, 'w');
    try {
      for (const [i, lines] of buckets.entries()) {
        const block = lines.length === 0 ? Buffer.alloc(0) : Buffer.from(`${lines.join('\n')}\n`);
        if (block.length > 0) await out.write(block, 0, block.length, offset);
        sizes.push(block.length);
        crc32s.push(crc32(block) >>> 0);
        offset += block.length;
        index.writeBigUInt64BE(BigInt(offset), 8 * (i + 1));
      }
    } finally {
      await out.close();
    }
  }
  // The data first, then its index: a reader that finds the index finds its data complete.
  await rename(files.data + tmp, files.data);
  const ix = await open(files.index + tmp, 'w');
  try {
    await ix.write(index);
  } finally {
    await ix.close();
  }
  await rename(files.index + tmp, files.index);
  return {
    location: place.shuffleLocation,
    executorId: place.executorId,
    ...(place.shuffleService ? { shuffleService: true } : {}),
    sizes,
    crc32s,
    records,
  };
}
