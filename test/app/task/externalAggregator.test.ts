/**
 * The reduce side's spilling aggregation (grace hash): with a tiny threshold it spills, and every
 * key still comes out once with all its values merged, as a plain Map says; its sub-files are
 * gone after a full drain, an early stop and a failure.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import fc from 'fast-check';
import { canonicalJson } from '../../../backend/app/shuffle/keys.js';
import {
  ExternalAppendOnlyMap,
  FANOUT,
  subPartition,
} from '../../../backend/app/task/externalAggregator.js';
import type { SpillContext } from '../../../backend/app/task/spillContext.js';

const dir = mkdtempSync(join(tmpdir(), 'wick-test-extagg-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const ctx = (threshold: number): SpillContext => ({ dir, taskId: 5, threshold, metrics: {} });
const lists = () =>
  new ExternalAppendOnlyMap(
    (v) => [v],
    (c, v) => {
      (c as unknown[]).push(v);
      return c;
    },
    (a, b) => {
      (a as unknown[]).push(...(b as unknown[]));
      return a;
    },
    ctx(1),
  );

const keyArb = fc.oneof(
  fc.string({ maxLength: 4 }),
  fc.integer({ min: -20, max: 20 }),
  fc.jsonValue({ maxDepth: 2 }),
);

test('spilling, every key comes out once with all its values (groupByKey)', () => {
  fc.assert(
    fc.property(fc.array(fc.tuple(keyArb, fc.integer()), { maxLength: 800 }), (pairs) => {
      const m = lists();
      for (const [k, v] of pairs) m.insert(k, v);
      // Measured every 128 updates, over a threshold of 1 byte.
      assert.equal(m.spilled, pairs.length >= 128);
      const expected = new Map<string, number[]>();
      for (const [k, v] of pairs) {
        const key = canonicalJson(k);
        expected.set(key, [...(expected.get(key) ?? []), v]);
      }
      const got = new Map<string, number[]>();
      m.drain(([k, c]) => {
        const key = canonicalJson(k);
        assert.ok(!got.has(key), `key ${key} came out twice`);
        got.set(
          key,
          [...(c as number[])].sort((a, b) => a - b),
        );
        return false;
      });
      assert.equal(got.size, expected.size);
      for (const [k, vs] of expected)
        assert.deepEqual(
          got.get(k),
          vs.sort((a, b) => a - b),
        );
      assert.deepEqual(readdirSync(dir), []);
    }),
    { numRuns: 60, seed: 7 },
  );
});

test('it spills past the threshold, counts its spills, and a map under it does not', () => {
  const c = ctx(2048);
  const sum = (a: unknown, b: unknown) => (a as number) + (b as number);
  const m = new ExternalAppendOnlyMap((v) => v, sum, sum, c);
  for (let i = 0; i < 20_000; i++) m.insert(`key${i % 3000}`, 1);
  assert.ok(m.spilled);
  assert.ok((c.metrics.spillCount ?? 0) > 1);
  let n = 0;
  let total = 0;
  m.drain(([, v]) => {
    n++;
    total += v as number;
    return false;
  });
  assert.equal(n, 3000);
  assert.equal(total, 20_000);
  const small = ctx(1 << 30);
  const m2 = new ExternalAppendOnlyMap((v) => v, sum, sum, small);
  for (let i = 0; i < 20_000; i++) m2.insert(`key${i % 3000}`, 1);
  assert.equal(m2.spilled, false);
  assert.equal(small.metrics.spillCount, undefined);
});

test('an early stop or a failing merge leaves no sub-file', () => {
  const m = lists();
  for (let i = 0; i < 2000; i++) m.insert(i % 300, i);
  let seen = 0;
  m.drain(() => ++seen >= 3);
  assert.equal(seen, 3);
  assert.deepEqual(readdirSync(dir), []);
  const bad = new ExternalAppendOnlyMap(
    (v) => v,
    (a) => a,
    () => {
      throw new Error('boom');
    },
    ctx(1),
  );
  for (let i = 0; i < 2000; i++) bad.insert(i % 300, i);
  assert.throws(() => bad.drain(() => false), /boom/);
  assert.deepEqual(readdirSync(dir), []);
});

test("sub-partitions spread one reducer's keys (which share the reducer's hash) and differ by level", () => {
  const counts = new Array(FANOUT).fill(0);
  let same = 0;
  for (let i = 0; i < 16_000; i++) {
    const k = `w${i * 7}`;
    counts[subPartition(k, 0)]++;
    if (subPartition(k, 0) === subPartition(k, 1)) same++;
  }
  for (const c of counts) assert.ok(c > 700 && c < 1300, `sub-file sizes ${counts}`);
  assert.ok(same < 16_000 / FANOUT + 300, `levels agree on ${same} keys`);
});
