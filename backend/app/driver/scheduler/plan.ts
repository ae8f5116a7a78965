import type {
  Aggregator,
  PartitionerSpec,
  PartitionSource,
  Transformation,
} from '../../../protocol/task.js';

/**
 * What an RDD is to the DAGScheduler (its lineage): runs of partitions that share their
 * transformations (one run, except for a union), and the shuffles its sources read. Sources are
 * computed when a job first needs them (a textFile's splits: Spark's getPartitions), once.
 */
export interface Segment {
  sources: () => PartitionSource[];
  transformations: Step[];
  /** How many sources it has, when that is known without building them (a coalesce's). */
  count?: () => number;
  /** What must be resolved before its sources are built (a coalesce's parent's steps). */
  prepare?: () => Promise<void>;
}

/**
 * What a segment does to its partitions' elements: a narrow transformation, the same for each,
 * or zipWithIndex, whose first index differs per partition and is known only once a job has
 * counted the partitions before it (Spark's ZippedWithIndexRDD, which runs that job at once;
 * here when a job first needs it, as every Wick transformation is lazy).
 */
export type Step = Transformation | ZipWithIndexStep;

export interface ZipWithIndexStep {
  kind: 'zipWithIndex';
  /** The first index of each partition of the zipped RDD, by a job (memoized). */
  starts: () => Promise<number[]>;
  /** Where this segment's partitions start among the zipped RDD's (a union has several). */
  offset: () => number;
  /** `starts`, once resolved (resolveSteps): specOf is synchronous. */
  resolved?: number[];
}

/**
 * Resolves the zipWithIndex steps of a plan's own segments and of what they coalesce (not those of
 * the shuffles it reads: their stages do).
 */
export async function resolveSteps(plan: RddPlan): Promise<void> {
  for (const seg of plan.segments) {
    await seg.prepare?.();
    for (const step of seg.transformations) {
      if (step.kind === 'zipWithIndex') step.resolved ??= await step.starts();
    }
  }
}

/** A segment's transformations for its partition `local`, or undefined when every partition's are the same. */
export function transformationsAt(seg: Segment, local: number): Transformation[] | undefined {
  if (!seg.transformations.some((t) => t.kind === 'zipWithIndex')) return undefined;
  return seg.transformations.map((t) => {
    if (t.kind !== 'zipWithIndex') return t;
    const start = t.resolved?.[t.offset() + local];
    if (start === undefined) throw new Error('zipWithIndex: its start indices were not resolved');
    // A map with a counter in its env: each task gets its own copy of the env, so the count
    // starts again with every attempt, and the elements stream (no whole partition in memory).
    return {
      kind: 'map',
      fn: { source: '(x, env) => [x, env.next++]', env: { next: start } },
    };
  });
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
  for (const s of plan.segments) n += s.count ? s.count() : s.sources().length;
  return n;
}
