/**
 * Cross-language key agreement: examples/python/wick_keys.py computes the same canonical JSON,
 * FNV-1a hash, hash and range partitions and key order as backend/app/shuffle/keys.ts and
 * partitioners.ts, for keys of every JSON type. The cases are made here, in JavaScript, as JSON
 * texts (what a Python executor gets in a block or a task), read by both sides, and compared. Hand-picked
 * texts cover where the languages' own JSON differs (1.0, 1e16, 1e21, -0, ints beyond 2**53,
 * lone surrogates, member order by UTF-16 code units); a seeded generator adds nested values.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { canonicalJson, compareKeys, hashKey } from '../../backend/app/shuffle/keys.js';
import { partitionFunction, rangeBounds } from '../../backend/app/shuffle/partitioners.js';
import { repoRoot } from '../helpers/cli.js';
import { seeded } from '../helpers/seeded.js';

const PYTHON = `
import json, sys
sys.path.insert(0, sys.argv[1])
from wick_keys import canonical_json, compare_keys, hash_key, partition_function
cases = json.loads(sys.stdin.read())
keys = [json.loads(t) for t in cases["texts"]]
out = {"canonical": [], "hash": [], "partitions": [], "compare": []}
parts = [partition_function({"kind": "hash"}, n, 0) for n in cases["ns"]]
ranges = [partition_function({"kind": "range", "bounds": cases["bounds"], "ascending": a}, 1, 0)
          for a in (True, False)]
for k in keys:
    out["canonical"].append(canonical_json(k))
    out["hash"].append(hash_key(k))
    out["partitions"].append([p([k, None]) for p in parts] + [r([k, None]) for r in ranges])
for i in range(len(keys)):
    out["compare"].append("".join("<=>"[1 + max(-1, min(1, compare_keys(keys[i], b)))] for b in keys))
sys.stdout.write(json.dumps(out, ensure_ascii=True))
`;

/** JSON texts where JavaScript's and Python's JSON disagree, or that are edge cases of the format. */
const HAND_PICKED = [
  'null',
  'true',
  'false',
  '0',
  '-0',
  '-0.0',
  '0.0',
  '1',
  '1.0',
  '1e0',
  '-1',
  '0.1',
  '0.2',
  '0.30000000000000004',
  '1e21',
  '1E21',
  '1e20',
  '123456789012345678901234',
  '1e16',
  '1.5e16',
  '9007199254740991',
  '9007199254740992',
  '9007199254740993',
  '12345678901234567890',
  '-12345678901234567890',
  '1e-7',
  '1e-6',
  '0.000001',
  '0.0000001',
  '1.5e-10',
  '5e-324',
  '1.7976931348623157e308',
  '-1.7976931348623157e308',
  '123.456',
  '-2.5e-8',
  '100',
  '1e2',
  '""',
  '"a"',
  '"A"',
  '"word"',
  '"1"',
  '"é"',
  '"日本語"',
  '"\\ud83d\\ude00"',
  '"😀"',
  '"\\ud800"',
  '"x\\udc00y"',
  '"\\uffff"',
  '"\\u0000\\u001f\\u007f"',
  '"tab\\there\\nnew \\"q\\" \\\\ /"',
  '"\\u2028\\u2029"',
  '[]',
  '[1,2]',
  '[1.0,2.0]',
  '[1]',
  '[1,[2,[3,null]]]',
  '["a",1,true,null,{}]',
  '{}',
  '{"b":1,"a":2}',
  '{"a":2,"b":1}',
  '{"😀":1,"\\uffff":2}',
  '{"\\uffff":2,"😀":1}',
  '{"a":{"d":[1,{"z":0,"y":-0}],"c":1e21}}',
  '{"":null}',
];

function randomString(r: () => number): string {
  const pool = [
    'a',
    'z',
    'Z',
    '0',
    ' ',
    'é',
    'ß',
    '日',
    '😀',
    '\ud800',
    '\udfff',
    '\u0001',
    '"',
    '\\',
    '\uffff',
  ];
  let s = '';
  const n = Math.floor(r() * 6);
  for (let i = 0; i < n; i++) s += pool[Math.floor(r() * pool.length)];
  return s;
}

function randomNumber(r: () => number): number {
  switch (Math.floor(r() * 5)) {
    case 0:
      return Math.floor(r() * 2000) - 1000;
    case 1:
      return (r() - 0.5) * 10 ** Math.floor(r() * 40 - 20);
    case 2:
      return Math.floor(r() * 2 ** 60);
    case 3:
      return Math.floor(r() * 100) / 10;
    default:
      return r() * 1e-300;
  }
}

function randomKey(r: () => number, depth = 0): unknown {
  const kind = Math.floor(r() * (depth > 2 ? 5 : 7));
  switch (kind) {
    case 0:
      return null;
    case 1:
      return r() < 0.5;
    case 2:
      return randomNumber(r);
    case 3:
    case 4:
      return randomString(r);
    case 5:
      return Array.from({ length: Math.floor(r() * 4) }, () => randomKey(r, depth + 1));
    default: {
      const o: Record<string, unknown> = {};
      for (let i = Math.floor(r() * 4); i > 0; i--) o[randomString(r)] = randomKey(r, depth + 1);
      return o;
    }
  }
}

test('Python computes the canonical JSON, hash, partitions and order of every key as JavaScript does', () => {
  const r = seeded(19);
  const texts = [...HAND_PICKED];
  for (let i = 0; i < 300; i++) texts.push(JSON.stringify(randomKey(r)));
  const keys = texts.map((t) => JSON.parse(t) as unknown);
  const ns = [1, 2, 7, 100, 65_536];
  const bounds = rangeBounds(
    keys.filter((_, i) => i % 3 === 0),
    9,
  );
  assert.ok(bounds.length >= 5, `range bounds of every type: ${JSON.stringify(bounds)}`);
  const run = spawnSync('python3', ['-c', PYTHON, join(repoRoot, 'examples', 'python')], {
    input: JSON.stringify({ texts, ns, bounds }),
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  assert.equal(run.status, 0, `python3 failed:\n${run.stderr}`);
  const py = JSON.parse(run.stdout) as {
    canonical: string[];
    hash: number[];
    partitions: number[][];
    compare: string[];
  };
  const parts = ns.map((n) => partitionFunction({ kind: 'hash' }, n, 0));
  const ranges = [true, false].map((ascending) =>
    partitionFunction({ kind: 'range', bounds, ascending }, bounds.length + 1, 0),
  );
  for (const [i, k] of keys.entries()) {
    const what = `key ${i}, JSON text ${texts[i]}`;
    assert.equal(py.canonical[i], canonicalJson(k), `canonical JSON of ${what}`);
    assert.equal(py.hash[i], hashKey(k), `hash of ${what}`);
    assert.deepEqual(
      py.partitions[i],
      [...parts.map((p) => p([k, null])), ...ranges.map((p) => p([k, null]))],
      `partitions (hash mod ${ns.join(', ')}; range up, down) of ${what}`,
    );
    const order = keys.map((b) => '<=>'[1 + Math.sign(compareKeys(k, b))]).join('');
    assert.equal(py.compare[i], order, `order of ${what} against every key`);
  }
  // The cases do reach where the languages differ: JavaScript's forms, not Python's.
  const canon = (t: string) => py.canonical[texts.indexOf(t)];
  assert.equal(canon('1.0'), '1');
  assert.equal(canon('1e16'), '10000000000000000');
  assert.equal(canon('1e21'), '1e+21');
  assert.equal(canon('-0.0'), '0');
  assert.equal(canon('12345678901234567890'), '12345678901234567000');
  assert.equal(canon('1e-7'), '1e-7');
  assert.equal(canon('"\\ud800"'), '"\\ud800"');
  assert.equal(canon('{"\\uffff":2,"😀":1}'), '{"😀":1,"\uffff":2}');
});
