import type {
  Aggregator,
  FunctionSpec,
  PartitionAction,
  PartitionerSpec,
  PartitionSource,
  Transformation,
} from '../../protocol/task.js';
import { prepareFunction } from '../closure.js';
import { rangeBounds } from '../shuffle/partitioners.js';
import {
  numPartitionsOf,
  once,
  type RddPlan,
  resolveSteps,
  type Segment,
  type ShuffleDependency,
  transformationsAt,
} from './scheduler/plan.js';

/** @internal What an RDD needs from its context: a way to run a job of its lineage. */
export interface JobRunner {
  runJob(plan: RddPlan, action: PartitionAction): Promise<unknown[]>;
  newShuffleId(): number;
}

/** A function of Wick's own (no free names, no env of the user's): shipped as its source. */
function builtin(source: string, env?: unknown): FunctionSpec {
  return env === undefined ? { source } : { source, env };
}

// The combiners of groupByKey and cogroup: lists, built on the reduce side (no map-side combine,
// as Spark: grouping shrinks nothing).
const GROUP: Aggregator = {
  createCombiner: builtin('(v) => [v]'),
  mergeValue: builtin('(c, v) => { c.push(v); return c; }'),
  mergeCombiners: builtin('(a, b) => { for (const x of b) a.push(x); return a; }'),
};
const COGROUP: Aggregator = {
  createCombiner: builtin('(t) => { const c = [[], []]; c[t[0]].push(t[1]); return c; }'),
  mergeValue: builtin('(c, t) => { c[t[0]].push(t[1]); return c; }'),
  mergeCombiners: builtin(
    '(a, b) => { for (const x of b[0]) a[0].push(x); for (const x of b[1]) a[1].push(x); return a; }',
  ),
};
const JOINS = {
  inner:
    '(c) => { const out = []; for (const v of c[0]) for (const w of c[1]) out.push([v, w]); return out; }',
  left: '(c) => { const out = []; for (const v of c[0]) { if (c[1].length === 0) out.push([v, null]); else for (const w of c[1]) out.push([v, w]); } return out; }',
  right:
    '(c) => { const out = []; for (const w of c[1]) { if (c[0].length === 0) out.push([null, w]); else for (const v of c[0]) out.push([v, w]); } return out; }',
  full: '(c) => { const out = []; if (c[0].length === 0) { for (const w of c[1]) out.push([null, w]); return out; } if (c[1].length === 0) { for (const v of c[0]) out.push([v, null]); return out; } for (const v of c[0]) for (const w of c[1]) out.push([v, w]); return out; }',
};

/**
 * A lazy, partitioned collection in the spirit of Spark's RDD. Transformations only describe work;
 * actions ship it to executors, one task per partition. Functions travel as source text: what they
 * use from outside must be passed as `env`, their last argument (`map((x, env) => x * env.k, { k })`),
 * and is checked before anything runs. Elements and results travel as JSON.
 *
 * Pair operations (reduceByKey, join, …) apply to an RDD of `[key, value]` arrays and shuffle
 * it: the job then runs in stages (DAGScheduler). Keys are JSON values, equal when their
 * canonical JSON is (docs/protocol.md, "Shuffle"): `1` and `1.0` are one key, `{a, b}` and
 * `{b, a}` too, `"1"` and `1` are two.
 */
export class RDD<T> {
  /** @internal RDDs are made by a WickContext (parallelize, range, textFile) and by transformations. */
  constructor(
    private readonly runner: JobRunner,
    /** @internal */
    readonly plan: RddPlan,
  ) {}

  /** The number of partitions (a textFile's splits are computed here if no job did yet). */
  get numPartitions(): number {
    return numPartitionsOf(this.plan);
  }

  map<U, E = undefined>(f: (x: T, env: E) => U, env?: E): RDD<U> {
    return this.derive('map', f, env);
  }

  filter<E = undefined>(f: (x: T, env: E) => boolean, env?: E): RDD<T> {
    return this.derive('filter', f, env);
  }

  flatMap<U, E = undefined>(f: (x: T, env: E) => Iterable<U>, env?: E): RDD<U> {
    return this.derive('flatMap', f, env);
  }

  /** `f` gets a whole partition as an array and returns (or resolves to) its new elements. */
  mapPartitions<U, E = undefined>(
    f: (xs: T[], env: E) => Iterable<U> | Promise<Iterable<U>>,
    env?: E,
  ): RDD<U> {
    return this.derive('mapPartitions', f, env);
  }

  /** Pairs `[f(x), x]`. */
  keyBy<K, E = undefined>(f: (x: T, env: E) => K, env?: E): RDD<[K, T]> {
    return this.derive('keyBy', f, env);
  }

  /** This RDD's partitions, then `other`'s (no shuffle). */
  union(other: RDD<T>): RDD<T> {
    if (other.runner !== this.runner)
      throw new Error('union: both RDDs must come from the same WickContext');
    return new RDD<T>(this.runner, {
      segments: [...this.plan.segments, ...other.plan.segments],
      deps: [...this.plan.deps, ...other.plan.deps],
    });
  }

  /**
   * Each element with its index, `[x, i]`, in partition order (Spark's zipWithIndex). The first
   * index of each partition needs the sizes of those before it: the first job that uses this RDD
   * first runs a job that counts them (once; Spark runs it when zipWithIndex is called).
   */
  zipWithIndex(): RDD<[T, number]> {
    const parent = this.plan;
    const starts = retryable(async () => {
      const counts = (await this.run({ kind: 'count' })) as number[];
      const out: number[] = [];
      let next = 0;
      for (const c of counts) {
        out.push(next);
        next += c;
      }
      return out;
    });
    const segments: Segment[] = parent.segments.map((s, k) => ({
      sources: s.sources,
      transformations: [
        ...s.transformations,
        {
          kind: 'zipWithIndex',
          starts,
          offset: once(() => numPartitionsOf({ segments: parent.segments.slice(0, k), deps: [] })),
        },
      ],
    }));
    return new RDD<[T, number]>(this.runner, { segments, deps: parent.deps });
  }

  /**
   * At most `numPartitions` partitions (Spark's coalesce). Without a shuffle, partition i is the
   * parent's partitions ⌊i·N/n⌋ to ⌊(i+1)·N/n⌋ − 1, read one after another in one task (Spark's
   * grouping when partitions prefer no host), so a sorted RDD stays sorted; with fewer than
   * `numPartitions` they stay as they are. With `shuffle`, it is repartition(numPartitions).
   */
  coalesce(numPartitions: number, shuffle = false): RDD<T> {
    checkPartitions(numPartitions, 'coalesce');
    if (shuffle) return this.repartition(numPartitions);
    const parent = this.plan;
    const count = () => Math.min(numPartitions, numPartitionsOf(parent));
    const sources = (): PartitionSource[] => {
      const byPartition = partsOf(parent);
      const n = count();
      const N = byPartition.length;
      return Array.from({ length: n }, (_, i) => ({
        kind: 'coalesced' as const,
        parts: byPartition.slice(Math.floor((i * N) / n), Math.floor(((i + 1) * N) / n)).flat(),
      }));
    };
    return new RDD<T>(this.runner, {
      segments: [{ sources, transformations: [], count, prepare: () => resolveSteps(parent) }],
      deps: parent.deps,
    });
  }

  // Pair operations: `this: RDD<[K, V]>` makes them typecheck on RDDs of pairs only.

  mapValues<K, V, U, E = undefined>(
    this: RDD<[K, V]>,
    f: (v: V, env: E) => U,
    env?: E,
  ): RDD<[K, U]> {
    return this.derive('mapValues', f, env);
  }

  flatMapValues<K, V, U, E = undefined>(
    this: RDD<[K, V]>,
    f: (v: V, env: E) => Iterable<U>,
    env?: E,
  ): RDD<[K, U]> {
    return this.derive('flatMapValues', f, env);
  }

  keys<K, V>(this: RDD<[K, V]>): RDD<K> {
    return this.narrow('map', builtin('(p) => p[0]'));
  }

  values<K, V>(this: RDD<[K, V]>): RDD<V> {
    return this.narrow('map', builtin('(p) => p[1]'));
  }

  /**
   * Spark's combineByKey: each key's values become one combiner (createCombiner, mergeValue),
   * combined in each map task first, then across them (mergeCombiners), in `numPartitions`
   * partitions (default: as many as this RDD has).
   */
  combineByKey<K, V, C, E = undefined>(
    this: RDD<[K, V]>,
    createCombiner: (v: V, env: E) => C,
    mergeValue: (c: C, v: V, env: E) => C,
    mergeCombiners: (a: C, b: C, env: E) => C,
    numPartitions?: number,
    env?: E,
  ): RDD<[K, C]> {
    return this.shuffle<[K, C]>({
      numPartitions,
      aggregator: {
        createCombiner: prepareFunction(createCombiner, 'combineByKey (createCombiner)', env),
        mergeValue: prepareFunction(mergeValue, 'combineByKey (mergeValue)', env),
        mergeCombiners: prepareFunction(mergeCombiners, 'combineByKey (mergeCombiners)', env),
      },
      mapSideCombine: true,
    });
  }

  /** Each key's values combined with `f` (associative and commutative), map-side first. */
  reduceByKey<K, V, E = undefined>(
    this: RDD<[K, V]>,
    f: (a: V, b: V, env: E) => V,
    numPartitions?: number,
    env?: E,
  ): RDD<[K, V]> {
    const fn = prepareFunction(f, 'reduceByKey', env);
    return this.shuffle<[K, V]>({
      numPartitions,
      aggregator: { mergeValue: fn, mergeCombiners: fn },
      mapSideCombine: true,
    });
  }

  /** reduceByKey starting each key (in each map task) from a copy of `zero`. */
  foldByKey<K, V, E = undefined>(
    this: RDD<[K, V]>,
    zero: V,
    f: (a: V, b: V, env: E) => V,
    numPartitions?: number,
    env?: E,
  ): RDD<[K, V]> {
    const fn = prepareFunction(f, 'foldByKey', env);
    checkZero(zero, 'foldByKey');
    return this.shuffle<[K, V]>({
      numPartitions,
      aggregator: { mergeValue: fn, mergeCombiners: fn, zero },
      mapSideCombine: true,
    });
  }

  /** Each key's values folded into a copy of `zero` with seqOp; combOp merges the folds. */
  aggregateByKey<K, V, U, E = undefined>(
    this: RDD<[K, V]>,
    zero: U,
    seqOp: (acc: U, v: V, env: E) => U,
    combOp: (a: U, b: U, env: E) => U,
    numPartitions?: number,
    env?: E,
  ): RDD<[K, U]> {
    checkZero(zero, 'aggregateByKey');
    return this.shuffle<[K, U]>({
      numPartitions,
      aggregator: {
        mergeValue: prepareFunction(seqOp, 'aggregateByKey (seqOp)', env),
        mergeCombiners: prepareFunction(combOp, 'aggregateByKey (combOp)', env),
        zero,
      },
      mapSideCombine: true,
    });
  }

  /** Each key with the array of its values (in no particular order). */
  groupByKey<K, V>(this: RDD<[K, V]>, numPartitions?: number): RDD<[K, V[]]> {
    return this.shuffle<[K, V[]]>({ numPartitions, aggregator: GROUP });
  }

  /** How many elements each key has (Spark's countByKey), as a Map of the keys collected. */
  async countByKey<K, V>(this: RDD<[K, V]>): Promise<Map<K, number>> {
    const counts = this.narrow<[K, number]>('mapValues', builtin('() => 1')).shuffle<[K, number]>({
      aggregator: {
        mergeValue: builtin('(a, b) => a + b'),
        mergeCombiners: builtin('(a, b) => a + b'),
      },
      mapSideCombine: true,
    });
    return new Map(await counts.collect());
  }

  /** The same pairs, spread over `numPartitions` by the hash of their keys (HashPartitioner). */
  partitionBy<K, V>(this: RDD<[K, V]>, numPartitions: number): RDD<[K, V]> {
    checkPartitions(numPartitions, 'partitionBy');
    return this.shuffle<[K, V]>({ numPartitions });
  }

  /** Each key of either RDD with its values in this one and in `other` (Spark's cogroup). */
  cogroup<K, V, W>(
    this: RDD<[K, V]>,
    other: RDD<[K, W]>,
    numPartitions?: number,
  ): RDD<[K, [V[], W[]]]> {
    const left = this.narrow<[K, [0, V]]>('map', builtin('(p) => [p[0], [0, p[1]]]'));
    const right = other.narrow<[K, [1, W]]>('map', builtin('(p) => [p[0], [1, p[1]]]'));
    const n = numPartitions ?? Math.max(this.numPartitionsLazy(), other.numPartitionsLazy());
    return (left as unknown as RDD<[K, unknown]>)
      .union(right as unknown as RDD<[K, unknown]>)
      .shuffle<[K, [V[], W[]]]>({ numPartitions: n, aggregator: COGROUP });
  }

  /** `[k, [v, w]]` for each pair of values of a key in both (Spark's `(K, (V, W))`). */
  join<K, V, W>(this: RDD<[K, V]>, other: RDD<[K, W]>, numPartitions?: number): RDD<[K, [V, W]]> {
    return this.cogroup(other, numPartitions).narrow('flatMapValues', builtin(JOINS.inner));
  }

  /** As join, and `[k, [v, null]]` for a key `other` lacks. */
  leftOuterJoin<K, V, W>(
    this: RDD<[K, V]>,
    other: RDD<[K, W]>,
    numPartitions?: number,
  ): RDD<[K, [V, W | null]]> {
    return this.cogroup(other, numPartitions).narrow('flatMapValues', builtin(JOINS.left));
  }

  /** As join, and `[k, [null, w]]` for a key this RDD lacks. */
  rightOuterJoin<K, V, W>(
    this: RDD<[K, V]>,
    other: RDD<[K, W]>,
    numPartitions?: number,
  ): RDD<[K, [V | null, W]]> {
    return this.cogroup(other, numPartitions).narrow('flatMapValues', builtin(JOINS.right));
  }

  /** Both outer joins: a key either side lacks gets `null` there. */
  fullOuterJoin<K, V, W>(
    this: RDD<[K, V]>,
    other: RDD<[K, W]>,
    numPartitions?: number,
  ): RDD<[K, [V | null, W | null]]> {
    return this.cogroup(other, numPartitions).narrow('flatMapValues', builtin(JOINS.full));
  }

  /**
   * The pairs sorted by key (the key order of docs/protocol.md): a RangePartitioner whose bounds
   * come from a sample of the keys, taken by a job of its own when the sort's map stage first
   * runs (Spark samples when sortByKey is called; here the RDD stays lazy), then each partition
   * sorted. Partition i's keys all come before partition i + 1's.
   */
  sortByKey<K, V>(this: RDD<[K, V]>, ascending = true, numPartitions?: number): RDD<[K, V]> {
    const n = once(() => numPartitions ?? this.numPartitions);
    const partitioner = retryable(async (): Promise<PartitionerSpec> => {
      const parts = this.numPartitions;
      const sampleSize = Math.min(20 * n(), 1_000_000);
      const perPartition = Math.ceil((3 * sampleSize) / Math.max(1, parts));
      // A reservoir of each partition's keys (Algorithm R), streamed: a partition (a shuffle's
      // reducer, say) need not fit in memory to be sampled.
      const reservoirs = (await this.narrow<K>('map', builtin('(p) => p[0]')).run({
        kind: 'aggregate',
        zero: { n: 0, s: [] },
        seqOp: builtin(
          '(acc, key, env) => { acc.n++; if (acc.s.length < env.k) acc.s.push(key); else { const j = Math.floor(Math.random() * acc.n); if (j < env.k) acc.s[j] = key; } return acc; }',
          { k: perPartition },
        ),
      })) as { n: number; s: K[] }[];
      const sample = reservoirs.flatMap((r) => r.s);
      return { kind: 'range', bounds: rangeBounds(sample, n()), ascending };
    });
    return this.shuffle<[K, V]>({ numPartitions: n, partitioner, ascending });
  }

  /** Distinct elements (by canonical JSON). */
  distinct(numPartitions?: number): RDD<T> {
    return this.narrow<[T, null]>('map', builtin('(x) => [x, null]'))
      .shuffle<[T, null]>({
        numPartitions,
        aggregator: { mergeValue: builtin('(a) => a'), mergeCombiners: builtin('(a) => a') },
        mapSideCombine: true,
      })
      .keys();
  }

  /** The elements grouped by `f(x)`: `[key, elements]`. */
  groupBy<K, E = undefined>(
    f: (x: T, env: E) => K,
    numPartitions?: number,
    env?: E,
  ): RDD<[K, T[]]> {
    return this.keyBy(f, env).groupByKey(numPartitions);
  }

  /** The elements sorted by `f(x)` (sortByKey on it). */
  sortBy<K, E = undefined>(
    f: (x: T, env: E) => K,
    ascending = true,
    numPartitions?: number,
    env?: E,
  ): RDD<T> {
    return this.keyBy(f, env).sortByKey(ascending, numPartitions).values();
  }

  /** The same elements in `numPartitions` partitions, dealt round robin (a shuffle). */
  repartition(numPartitions: number): RDD<T> {
    checkPartitions(numPartitions, 'repartition');
    return this.shuffle<T>({
      numPartitions,
      partitioner: async () => ({ kind: 'roundRobin' }),
    });
  }

  async collect(): Promise<T[]> {
    const parts = (await this.run({ kind: 'collect' })) as T[][];
    return parts.flat();
  }

  async count(): Promise<number> {
    const parts = (await this.run({ kind: 'count' })) as number[];
    return parts.reduce((a, b) => a + b, 0);
  }

  async take(n: number): Promise<T[]> {
    if (!Number.isInteger(n) || n < 0) throw new Error(`take expects a whole number ≥ 0, got ${n}`);
    if (n === 0) return [];
    const parts = (await this.run({ kind: 'take', n })) as T[][];
    return parts.flat().slice(0, n);
  }

  async first(): Promise<T> {
    const [x] = await this.take(1);
    if (x === undefined) throw new Error('first() of an empty RDD: it has no element');
    return x;
  }

  /** Combines the elements with `f`, which must be associative and commutative. */
  async reduce<E = undefined>(f: (a: T, b: T, env: E) => T, env?: E): Promise<T> {
    const parts = (await this.run({ kind: 'reduce', fn: prepareFunction(f, 'reduce', env) })) as (
      | { empty: true }
      | { value: T }
    )[];
    const values = parts.filter((p): p is { value: T } => 'value' in p).map((p) => p.value);
    if (values.length === 0)
      throw new Error('reduce() of an empty RDD: there is nothing to combine (use fold)');
    return values.reduce((a, b) => f(a, b, env as E));
  }

  fold<E = undefined>(zero: T, f: (a: T, b: T, env: E) => T, env?: E): Promise<T> {
    return this.aggregate(zero, f, f, env);
  }

  /** Each partition folds its elements into a copy of `zero` with seqOp; combOp merges partitions. */
  async aggregate<U, E = undefined>(
    zero: U,
    seqOp: (acc: U, x: T, env: E) => U,
    combOp: (a: U, b: U, env: E) => U,
    env?: E,
  ): Promise<U> {
    prepareFunction(combOp, 'aggregate (combOp)', env);
    const parts = (await this.run({
      kind: 'aggregate',
      zero,
      seqOp: prepareFunction(seqOp, 'aggregate', env),
    })) as U[];
    return parts.reduce((a, b) => combOp(a, b, env as E), structuredClone(zero));
  }

  async sum(): Promise<number> {
    return (await this.aggregate<number>(
      0,
      (a, x) => a + Number(x),
      (a, b) => a + b,
    )) as number;
  }

  async foreach<E = undefined>(f: (x: T, env: E) => void, env?: E): Promise<void> {
    await this.run({ kind: 'foreach', fn: prepareFunction(f, 'foreach', env) });
  }

  private derive<U>(kind: Transformation['kind'], f: unknown, env: unknown): RDD<U> {
    return this.narrow<U>(kind, prepareFunction(f, kind, env));
  }

  private narrow<U>(kind: Transformation['kind'], fn: FunctionSpec): RDD<U> {
    const segments: Segment[] = this.plan.segments.map((s) => ({
      sources: s.sources,
      transformations: [...s.transformations, { kind, fn }],
    }));
    return new RDD<U>(this.runner, { segments, deps: this.plan.deps });
  }

  /** The partitions a shuffle of this RDD has by default: as many as it has (Spark's, unset). */
  private numPartitionsLazy(): number {
    return this.numPartitions;
  }

  /** A ShuffleDependency on this RDD, and the RDD of its reducers' partitions. */
  private shuffle<U>(o: {
    numPartitions?: number | (() => number);
    aggregator?: Aggregator;
    mapSideCombine?: boolean;
    partitioner?: () => Promise<PartitionerSpec>;
    ascending?: boolean;
  }): RDD<U> {
    if (typeof o.numPartitions === 'number') checkPartitions(o.numPartitions, 'A shuffle');
    const given = o.numPartitions;
    const numPartitions = once(() =>
      typeof given === 'function' ? given() : (given ?? this.numPartitions),
    );
    const shuffleId = this.runner.newShuffleId();
    const parent = this.plan;
    const dep: ShuffleDependency = {
      shuffleId,
      parent,
      get numPartitions() {
        return numPartitions();
      },
      partitioner: o.partitioner ?? (async () => ({ kind: 'hash' })),
      ...(o.aggregator ? { aggregator: o.aggregator } : {}),
      ...(o.mapSideCombine ? { mapSideCombine: true } : {}),
    };
    const sources = once((): PartitionSource[] =>
      Array.from({ length: numPartitions() }, (_, reduceId) => ({
        kind: 'shuffle' as const,
        shuffleId,
        reduceId,
        blocks: [],
        ...(o.aggregator ? { aggregator: o.aggregator } : {}),
        ...(o.mapSideCombine ? { mapSideCombine: true } : {}),
        ...(o.ascending !== undefined ? { ascending: o.ascending } : {}),
      })),
    );
    return new RDD<U>(this.runner, {
      segments: [{ sources, transformations: [] }],
      deps: [dep],
    });
  }

  private run(action: PartitionAction): Promise<unknown[]> {
    return this.runner.runJob(this.plan, action);
  }
}

type Part = Extract<PartitionSource, { kind: 'coalesced' }>['parts'][number];

/**
 * An RDD's partitions, each as coalesce's parts (a source and its transformations). A partition
 * that is coalesced already stands for its parts, with what follows applied to each, which only
 * element-wise steps allow (not a mapPartitions or a zipWithIndex: each needs the whole partition).
 */
function partsOf(plan: RddPlan): Part[][] {
  const out: Part[][] = [];
  for (const seg of plan.segments) {
    for (const [local, source] of seg.sources().entries()) {
      const transformations =
        transformationsAt(seg, local) ?? (seg.transformations as Transformation[]);
      if (source.kind !== 'coalesced') {
        out.push([{ source, transformations }]);
        continue;
      }
      if (transformations.some((t) => t.kind === 'mapPartitions')) {
        throw new Error(
          'coalesce of an RDD that was coalesced and then went through mapPartitions is not supported (mapPartitions must see its whole partition): coalesce once, after the mapPartitions, or use repartition(n)',
        );
      }
      // zipWithIndex numbers a whole partition from its start: split into parts, each would
      // start again.
      if (seg.transformations.some((t) => t.kind === 'zipWithIndex')) {
        throw new Error(
          'coalesce of an RDD that was coalesced and then zipped with zipWithIndex is not supported (each index runs through a whole partition): zipWithIndex after the last coalesce, or use repartition(n)',
        );
      }
      out.push(
        source.parts.map((p) => ({
          source: p.source,
          transformations: [...p.transformations, ...transformations],
        })),
      );
    }
  }
  return out;
}

/** Memoizes an async computation once it succeeds (a failed sampling job is tried again). */
function retryable<T>(f: () => Promise<T>): () => Promise<T> {
  let p: Promise<T> | undefined;
  return () => {
    p ??= f().catch((err: unknown) => {
      p = undefined;
      throw err;
    });
    return p;
  };
}

function checkPartitions(n: number, what: string): void {
  if (!Number.isInteger(n) || n < 1 || n > 100_000)
    throw new Error(`${what} expects a number of partitions from 1 to 100000, got ${n}`);
}

function checkZero(zero: unknown, what: string): void {
  try {
    if (JSON.stringify(zero) === undefined) throw new Error('not JSON');
  } catch {
    throw new Error(`${what}: the zero value must be a JSON value, got ${String(zero)}`);
  }
}
