/** Key equality, hashing and order: what every executor (in any language) must compute alike. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  canonicalJson,
  compareKeys,
  fnv1a,
  hashKey,
  KeyMap,
} from '../../../backend/app/shuffle/keys.js';

test('canonical JSON: members sorted, no whitespace, one text per value', () => {
  assert.equal(canonicalJson({ b: 1, a: [true, null, 'x'] }), '{"a":[true,null,"x"],"b":1}');
  assert.equal(
    canonicalJson({ a: 1, b: { d: 2, c: 3 } }),
    canonicalJson({ b: { c: 3, d: 2 }, a: 1 }),
  );
  assert.equal(canonicalJson(1.0), canonicalJson(1));
  assert.equal(canonicalJson(-0), '0');
  assert.notEqual(canonicalJson('1'), canonicalJson(1));
  assert.throws(() => canonicalJson(Number.NaN), /A key must be a JSON value; NaN/);
});

test('hash: FNV-1a over UTF-8, the published test vectors and non-ASCII text', () => {
  // FNV-1a 32-bit vectors (http://www.isthe.com/chongo/tech/comp/fnv/).
  assert.equal(fnv1a(''), 0x811c9dc5);
  assert.equal(fnv1a('a'), 0xe40c292c);
  assert.equal(fnv1a('foobar'), 0xbf9cf968);
  fc.assert(
    fc.property(fc.string({ unit: 'grapheme' }), (s) => {
      // The same as hashing the bytes Buffer.from writes.
      let h = 0x811c9dc5;
      for (const b of Buffer.from(s, 'utf8')) h = Math.imul(h ^ b, 0x01000193);
      assert.equal(fnv1a(s), h >>> 0);
    }),
  );
  assert.equal(hashKey('word'), fnv1a('"word"'));
});

test('key order: a total order, types first, consistent with equality', () => {
  const keys = [null, false, true, -1, 0, 2.5, '', 'a', 'b', [], [1], [1, 2], [2], { a: 1 }, {}]; // objects by canonical text: '{"a":1}' < '{}'
  for (let i = 0; i < keys.length; i++) {
    for (let j = 0; j < keys.length; j++) {
      const c = Math.sign(compareKeys(keys[i], keys[j]));
      assert.equal(c, Math.sign(i - j), `${JSON.stringify(keys[i])} vs ${JSON.stringify(keys[j])}`);
    }
  }
  fc.assert(
    fc.property(fc.jsonValue(), fc.jsonValue(), (a, b) => {
      assert.equal(Math.sign(compareKeys(a, b)) + 0, -Math.sign(compareKeys(b, a)) + 0);
      if (canonicalJson(a) === canonicalJson(b)) assert.equal(compareKeys(a, b), 0);
    }),
  );
});

test('KeyMap: one entry per canonical JSON, whatever the key type', () => {
  fc.assert(
    fc.property(fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 50 }), (keys) => {
      const m = new KeyMap<number>();
      const byText = new Map<string, number>();
      for (const [i, k] of keys.entries()) {
        if (m.get(k) === undefined) m.set(k, i);
        if (!byText.has(canonicalJson(k))) byText.set(canonicalJson(k), i);
      }
      assert.equal(m.size, byText.size);
      assert.deepEqual([...m.values()].sort(), [...byText.values()].sort());
      for (const k of keys) assert.equal(m.get(k), byText.get(canonicalJson(k)));
    }),
  );
  const m = new KeyMap<string>();
  m.set(-0, 'zero');
  assert.equal(m.get(0), 'zero');
  assert.equal(m.get('0'), undefined);
  assert.throws(() => m.set(Number.NaN, 'x'), /NaN is not one/);
});
