import type { PartitionAction, PartitionSource, Transformation } from '../../protocol/executor.js';
import { prepareFunction } from '../closure.js';

/** @internal What an RDD needs from its context: a way to run a one-stage job. */
export interface JobRunner {
  runJob(
    sources: PartitionSource[],
    transformations: Transformation[],
    action: PartitionAction,
  ): Promise<unknown[]>;
}

/**
 * A lazy, partitioned collection in the spirit of Spark's RDD. Transformations only describe work;
 * actions ship it to executors, one task per partition. Functions travel as source text: what they
 * use from outside must be passed as `env`, their last argument (`map((x, env) => x * env.k, { k })`),
 * and is checked before anything runs. Elements and results travel as JSON.
 */
export class RDD<T> {
  /** @internal RDDs are made by a WickContext (parallelize, range, textFile) and by transformations. */
  constructor(
    private readonly runner: JobRunner,
    /** @internal */
    readonly sources: readonly PartitionSource[],
    /** @internal */
    readonly transformations: readonly Transformation[] = [],
  ) {}

  get numPartitions(): number {
    return this.sources.length;
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
    const fn = prepareFunction(f, kind, env);
    return new RDD<U>(this.runner, this.sources, [...this.transformations, { kind, fn }]);
  }

  private run(action: PartitionAction): Promise<unknown[]> {
    return this.runner.runJob([...this.sources], [...this.transformations], action);
  }
}
