/**
 * Size estimates: near the JSON length for small values, close for large regular ones, which
 * are measured from a sample of their elements (a list of a million values: 16 read).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { estimateJsonSize, SampledSize } from '../../../backend/app/shuffle/sizeEstimate.js';

test('small values: within a few bytes of their JSON text', () => {
  fc.assert(
    fc.property(fc.jsonValue({ maxDepth: 3 }), (v) => {
      const exact = JSON.stringify(v).length;
      const est = estimateJsonSize(v);
      // -0 is "0", escapes count more than one char: a loose band, but no order of magnitude.
      assert.ok(est <= exact * 3 + 16 && est * 3 + 16 >= exact, `${est} for ${exact}`);
    }),
    { numRuns: 300, seed: 2 },
  );
});

test('a large list is measured from a sample: close, reading a few of its elements', () => {
  const list = Array.from({ length: 1_000_000 }, (_, i) => `value-${i % 1000}`);
  let reads = 0;
  const watched = new Proxy(list, {
    get(target, p, receiver) {
      if (typeof p === 'string' && /^\d+$/.test(p)) reads++;
      return Reflect.get(target, p, receiver);
    },
  });
  const est = estimateJsonSize(['hot', watched]);
  const exact = JSON.stringify(['hot', list]).length;
  assert.ok(Math.abs(est - exact) / exact < 0.2, `${est} for ${exact}`);
  assert.ok(reads <= 16, `${reads} elements read`);
});

test('SampledSize: entries times the average sample, plus the per-record overhead', () => {
  const s = new SampledSize(2);
  assert.equal(s.estimate(10), 10 * 48);
  assert.equal(s.due(), false);
  assert.equal(s.due(), true);
  s.sample(['abcd', 1]);
  assert.equal(s.estimate(10), 10 * (estimateJsonSize(['abcd', 1]) + 48));
});
