import { mkdir, open, rename } from 'node:fs/promises';
import { crc32 } from 'node:zlib';
import type { PartitionAction, TaskDescription } from '../../protocol/executor.js';
import type { MapStatus } from '../../protocol/shuffle.js';
import { shuffleFiles } from '../shuffle/blocks.js';
import { KeyMap } from '../shuffle/keys.js';
import { partitionFunction } from '../shuffle/partitioners.js';
import type { TaskPlace } from './compile.js';
import { type Combiners, combinersOf } from './shuffleRead.js';

type ShuffleWrite = Extract<PartitionAction, { kind: 'shuffleWrite' }>;
type Fn = (...args: unknown[]) => unknown;

/**
 * A ShuffleMapStage task's end (Spark's SortShuffleWriter, without the sort: reducers read their
 * block whole): records go to their reducer's bucket, combined per key first when the shuffle
 * combines map-side (reduceByKey, aggregateByKey, combineByKey), then the buckets are written to
 * one data file and its index, and the task's result is the MapStatus the driver tracks.
 */
export function shuffleWriter(
  a: ShuffleWrite,
  task: TaskDescription,
  place: TaskPlace,
  fn: (spec: NonNullable<ShuffleWrite['aggregator']>['mergeValue']) => Fn,
): { push: (v: unknown) => void; result: () => Promise<MapStatus>; stopped: () => boolean } {
  const n = a.numPartitions;
  const partition = partitionFunction(a.partitioner, n, task.partition);
  const combine: Combiners | undefined =
    a.aggregator && a.mapSideCombine ? combinersOf(a.aggregator, fn) : undefined;
  const byKey = new KeyMap<[unknown, unknown]>();
  const buckets: string[][] = Array.from({ length: n }, () => []);
  let records = 0;
  const push = combine
    ? (r: unknown) => {
        const [k, v] = pairOf(r);
        const had = byKey.get(k);
        if (had) had[1] = combine.mergeValue(had[1], v);
        else byKey.set(k, [k, combine.createCombiner(v)]);
      }
    : (r: unknown) => {
        if (a.partitioner.kind !== 'roundRobin') pairOf(r);
        (buckets[partition(r)] as string[]).push(JSON.stringify(r));
        records++;
      };
  return {
    push,
    stopped: () => false,
    result: async () => {
      if (combine) {
        for (const e of byKey.values()) (buckets[partition(e)] as string[]).push(JSON.stringify(e));
        records = byKey.size;
      }
      return writeMapOutput(a.shuffleId, task.partition, buckets, place, records);
    },
  };
}

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
  const out = await open(files.data + tmp, 'w');
  let offset = 0;
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
