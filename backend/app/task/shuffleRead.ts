import type { Aggregator, PartitionSource } from '../../protocol/task.js';
import { parseBlock } from '../shuffle/blocks.js';
import { compareKeys } from '../shuffle/keys.js';
import { readRecordFile } from '../shuffle/spillFiles.js';
import { ExternalAppendOnlyMap } from './externalAggregator.js';
import { ExternalSorter } from './externalSorter.js';
import { noteRecordsRead } from './metrics.js';
import type { SpillContext } from './spillContext.js';

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

/** A reduce task's fetched blocks: in memory, or in one file one after another (fetched to disk). */
export type ShuffleInput = { blocks: readonly Uint8Array[] } | { file: string; bytes: number };

/** Thrown by a record visitor to stop reading (the action needs no more). */
const STOP = Symbol('stop');

/**
 * A reducer's elements (Spark's BlockStoreShuffleReader): the records of every map output's
 * block, combined per key when the shuffle has an aggregator (combiners from map-side combine
 * merged with mergeCombiners, else values folded with createCombiner / mergeValue), and sorted
 * by key for sortByKey. Blocks fetched to a file are read from it a chunk at a time; the
 * aggregation and the sort spill past the threshold (ExternalAppendOnlyMap, ExternalSorter), so a
 * reducer needs no more than about the threshold of memory for its records; a read that neither
 * aggregates nor sorts streams straight into the task's pipeline.
 */
export function emitShuffle(
  src: ShuffleSource,
  input: ShuffleInput,
  fn: (spec: Aggregator['mergeValue']) => Fn,
  push: (v: unknown) => void,
  stopped: () => boolean,
  ctx: SpillContext,
): void {
  if ('blocks' in input && input.blocks.length !== src.blocks.length) {
    throw new Error(
      `Shuffle ${src.shuffleId} reducer ${src.reduceId}: ${input.blocks.length} blocks fetched, ${src.blocks.length} expected`,
    );
  }
  const records = (visit: (r: unknown, length: number) => void): void => {
    let n = 0;
    try {
      if ('file' in input) n = readRecordFile(input.file, visit);
      else for (const b of input.blocks) n += parseBlock(b, visit);
    } catch (err) {
      if (err !== STOP) throw err;
    } finally {
      noteRecordsRead(ctx.metrics, n);
    }
  };
  const sorter =
    src.ascending !== undefined
      ? new ExternalSorter(
          src.ascending
            ? (x, y) => compareKeys((x as unknown[])[0], (y as unknown[])[0])
            : (x, y) => compareKeys((y as unknown[])[0], (x as unknown[])[0]),
          ctx,
        )
      : undefined;
  const out = (r: unknown): boolean => {
    push(r);
    return stopped();
  };
  try {
    if (src.aggregator) {
      const c = combinersOf(src.aggregator, fn);
      const map = src.mapSideCombine
        ? new ExternalAppendOnlyMap((x) => x, c.mergeCombiners, c.mergeCombiners, ctx)
        : new ExternalAppendOnlyMap(c.createCombiner, c.mergeValue, c.mergeCombiners, ctx);
      try {
        records((r) => {
          const [k, v] = r as [unknown, unknown];
          map.insert(k, v);
        });
        if (sorter)
          map.drain((e) => {
            sorter.insert(e, JSON.stringify(e).length);
            return false;
          });
        else map.drain(out);
      } finally {
        map.remove();
      }
    } else if (sorter) {
      records((r, length) => sorter.insert(r, length));
    } else {
      records((r) => {
        push(r);
        if (stopped()) throw STOP;
      });
      return;
    }
    sorter?.drain(out);
  } finally {
    sorter?.remove();
  }
}
