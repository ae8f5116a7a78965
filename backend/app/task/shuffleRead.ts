import type { Aggregator, PartitionSource } from '../../protocol/executor.js';
import { parseBlock } from '../shuffle/blocks.js';
import { compareKeys, KeyMap } from '../shuffle/keys.js';

type ShuffleSource = Extract<PartitionSource, { kind: 'shuffle' }>;
type Fn = (...args: unknown[]) => unknown;

export interface Combiners {
  createCombiner: (v: unknown) => unknown;
  mergeValue: (c: unknown, v: unknown) => unknown;
  mergeCombiners: (a: unknown, b: unknown) => unknown;
}

/** An Aggregator's three functions, compiled (see Aggregator in protocol/executor.ts). */
export function combinersOf(a: Aggregator, fn: (spec: Aggregator['mergeValue']) => Fn): Combiners {
  const mergeValue = fn(a.mergeValue) as Combiners['mergeValue'];
  const mergeCombiners = fn(a.mergeCombiners) as Combiners['mergeCombiners'];
  const zero = a.zero;
  const createCombiner: Combiners['createCombiner'] = a.createCombiner
    ? (fn(a.createCombiner) as Combiners['createCombiner'])
    : zero !== undefined
      ? (v) => mergeValue(structuredClone(zero), v)
      : (v) => v;
  return { createCombiner, mergeValue, mergeCombiners };
}

/**
 * A reducer's elements (Spark's BlockStoreShuffleReader): the records of every map output's
 * block, combined per key when the shuffle has an aggregator (combiners from map-side combine
 * merged with mergeCombiners, else values folded with createCombiner / mergeValue), and sorted
 * by key for sortByKey. Returns false when the action stopped early.
 */
export function emitShuffle(
  src: ShuffleSource,
  blocks: readonly Uint8Array[],
  fn: (spec: Aggregator['mergeValue']) => Fn,
  push: (v: unknown) => void,
  stopped: () => boolean,
): void {
  if (blocks.length !== src.blocks.length) {
    throw new Error(
      `Shuffle ${src.shuffleId} reducer ${src.reduceId}: ${blocks.length} blocks fetched, ${src.blocks.length} expected`,
    );
  }
  let out: unknown[] | undefined;
  if (src.aggregator) {
    const c = combinersOf(src.aggregator, fn);
    const byKey = new KeyMap<[unknown, unknown]>();
    const merge = src.mapSideCombine ? c.mergeCombiners : c.mergeValue;
    const create = src.mapSideCombine ? (x: unknown) => x : c.createCombiner;
    for (const b of blocks) {
      parseBlock(b, (r) => {
        const [k, v] = r as [unknown, unknown];
        const had = byKey.get(k);
        if (had) had[1] = merge(had[1], v);
        else byKey.set(k, [k, create(v)]);
      });
    }
    out = [...byKey.values()];
  } else if (src.ascending !== undefined) {
    out = [];
    const all = out;
    for (const b of blocks) parseBlock(b, (r) => all.push(r));
  }
  if (out === undefined) {
    for (const b of blocks) {
      parseBlock(b, (r) => {
        if (!stopped()) push(r);
      });
    }
    return;
  }
  if (src.ascending !== undefined) {
    const sign = src.ascending ? 1 : -1;
    out.sort((x, y) => sign * compareKeys((x as unknown[])[0], (y as unknown[])[0]));
  }
  for (const r of out) {
    push(r);
    if (stopped()) return;
  }
}
