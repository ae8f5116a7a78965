import type { PartitionerSpec } from '../../protocol/task.js';
import { compareKeys, hashKey } from './keys.js';

/**
 * Which reducer a record goes to, for a partitioner as the driver describes it (Spark's
 * HashPartitioner, RangePartitioner, and repartition's round robin). `mapId` seeds the round
 * robin, so that a recomputed map task deals its records as the first attempt did.
 */
export function partitionFunction(
  spec: PartitionerSpec,
  numPartitions: number,
  mapId: number,
): (record: unknown) => number {
  switch (spec.kind) {
    case 'hash':
      return (r) => hashKey((r as unknown[])[0]) % numPartitions;
    case 'range': {
      const { bounds, ascending } = spec;
      return (r) => {
        const p = rangePartition(bounds, (r as unknown[])[0]);
        return ascending ? p : bounds.length - p;
      };
    }
    case 'roundRobin': {
      let next = mapId % numPartitions;
      return () => {
        const p = next;
        next = next + 1 === numPartitions ? 0 : next + 1;
        return p;
      };
    }
  }
}

/** The number of bounds below the key: keys ≤ bounds[0] go to 0, above the last to bounds.length. */
export function rangePartition(bounds: readonly unknown[], key: unknown): number {
  let lo = 0;
  let hi = bounds.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (compareKeys(key, bounds[mid]) > 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Range bounds from a sample of the keys (RangePartitioner.determineBounds without weights): the
 * sample sorted, cut into `numPartitions` runs of equal size; duplicates are dropped, so a skewed
 * sample gives fewer (never empty-range) bounds.
 */
export function rangeBounds(sample: unknown[], numPartitions: number): unknown[] {
  if (numPartitions <= 1 || sample.length === 0) return [];
  const sorted = [...sample].sort(compareKeys);
  const bounds: unknown[] = [];
  const step = sorted.length / numPartitions;
  for (let i = 1; i < numPartitions; i++) {
    const candidate = sorted[Math.min(sorted.length - 1, Math.floor(i * step))];
    if (bounds.length === 0 || compareKeys(candidate, bounds[bounds.length - 1]) > 0)
      bounds.push(candidate);
  }
  return bounds;
}
