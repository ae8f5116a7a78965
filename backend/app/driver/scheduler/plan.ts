import type {
  Aggregator,
  PartitionerSpec,
  PartitionSource,
  Transformation,
} from '../../../protocol/executor.js';

/**
 * What an RDD is to the DAGScheduler (its lineage): runs of partitions that share their
 * transformations (one run, except for a union), and the shuffles its sources read. Sources are
 * computed when a job first needs them (a textFile's splits: Spark's getPartitions), once.
 */
export interface Segment {
  sources: () => PartitionSource[];
  transformations: Transformation[];
}

export interface RddPlan {
  segments: Segment[];
  /** The shuffles this RDD's partitions read (its parent stages), directly. */
  deps: ShuffleDependency[];
}

/** Spark's ShuffleDependency: the map side's RDD, how its records are split and combined. */
export interface ShuffleDependency {
  shuffleId: number;
  parent: RddPlan;
  numPartitions: number;
  /** A range partitioner's bounds come from a sampling job, run when the stage first runs. */
  partitioner: () => Promise<PartitionerSpec>;
  aggregator?: Aggregator;
  mapSideCombine?: boolean;
}

/** Memoizes a function of no arguments (sources, partitioners: computed once, when first needed). */
export function once<T>(f: () => T): () => T {
  let done = false;
  let value: T;
  return () => {
    if (!done) {
      value = f();
      done = true;
    }
    return value;
  };
}

export function numPartitionsOf(plan: RddPlan): number {
  let n = 0;
  for (const s of plan.segments) n += s.sources().length;
  return n;
}
