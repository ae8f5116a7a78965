/** Partitioners: which reducer each record goes to, and range bounds from a sample. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { compareKeys, hashKey } from '../../../backend/app/shuffle/keys.js';
import {
  partitionFunction,
  rangeBounds,
  rangePartition,
} from '../../../backend/app/shuffle/partitioners.js';

test('hash partitioner: equal keys (by canonical JSON) go to one reducer, within [0, n)', () => {
  const p = partitionFunction({ kind: 'hash' }, 7, 0);
  assert.equal(p([{ a: 1, b: 2 }, 'x']), p([{ b: 2, a: 1 }, 'y']));
  fc.assert(
    fc.property(fc.jsonValue(), fc.integer({ min: 1, max: 1000 }), (k, n) => {
      const r = partitionFunction({ kind: 'hash' }, n, 3)([k, 0]);
      assert.ok(r >= 0 && r < n);
      assert.equal(r, hashKey(k) % n);
    }),
  );
});

test('range partitioner: partitions are in key order, ascending and descending', () => {
  fc.assert(
    fc.property(
      fc.array(fc.oneof(fc.integer(), fc.string()), { minLength: 1, maxLength: 200 }),
      fc.integer({ min: 1, max: 20 }),
      (keys, n) => {
        const bounds = rangeBounds(keys, n);
        assert.ok(bounds.length <= n - 1);
        for (let i = 1; i < bounds.length; i++)
          assert.ok(compareKeys(bounds[i - 1], bounds[i]) < 0);
        const asc = partitionFunction({ kind: 'range', bounds, ascending: true }, n, 0);
        const desc = partitionFunction({ kind: 'range', bounds, ascending: false }, n, 0);
        for (const a of keys) {
          for (const b of keys) {
            if (compareKeys(a, b) < 0) {
              assert.ok(asc([a, 0]) <= asc([b, 0]));
              assert.ok(desc([a, 0]) >= desc([b, 0]));
            }
          }
          assert.ok(asc([a, 0]) < n && desc([a, 0]) >= 0);
        }
      },
    ),
  );
  assert.equal(rangePartition([10, 20], 5), 0);
  assert.equal(rangePartition([10, 20], 10), 0);
  assert.equal(rangePartition([10, 20], 11), 1);
  assert.equal(rangePartition([10, 20], 99), 2);
  // A skewed sample gives fewer bounds, never an empty range between two equal ones.
  assert.deepEqual(rangeBounds([1, 1, 1, 1, 1, 1, 2], 4), [1]);
});

test('round robin: records dealt in turn from a start set by the map partition', () => {
  const p = partitionFunction({ kind: 'roundRobin' }, 3, 4);
  assert.deepEqual([p('a'), p('b'), p('c'), p('d')], [1, 2, 0, 1]);
});
