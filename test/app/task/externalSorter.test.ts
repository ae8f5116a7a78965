/**
 * sortByKey's spilling sort: with a tiny threshold it writes runs and merges them, and the order
 * is the in-memory sort's (keys of every JSON type, both directions); runs are gone afterwards.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import fc from 'fast-check';
import { canonicalJson, compareKeys } from '../../../backend/app/shuffle/keys.js';
import { ExternalSorter } from '../../../backend/app/task/externalSorter.js';
import type { SpillContext } from '../../../backend/app/task/spillContext.js';

const dir = mkdtempSync(join(tmpdir(), 'wick-test-extsort-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('spilled runs merge into the order of an in-memory sort', () => {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.jsonValue({ maxDepth: 2 }), fc.integer()), { maxLength: 600 }),
      fc.boolean(),
      fc.integer({ min: 1, max: 2000 }),
      (records, ascending, threshold) => {
        const byKey = (x: unknown, y: unknown) =>
          (ascending ? 1 : -1) * compareKeys((x as unknown[])[0], (y as unknown[])[0]);
        const ctx: SpillContext = { dir, taskId: 9, threshold, metrics: {} };
        const s = new ExternalSorter(byKey, ctx);
        for (const r of records) s.insert(r, JSON.stringify(r).length);
        const got: unknown[] = [];
        s.drain((r) => {
          got.push(r);
          return false;
        });
        assert.equal(got.length, records.length);
        for (let i = 1; i < got.length; i++) assert.ok(byKey(got[i - 1], got[i]) <= 0, 'in order');
        const bag = (xs: unknown[]) => xs.map((x) => canonicalJson(x)).sort();
        assert.deepEqual(bag(got), bag(records));
        if (JSON.stringify(records).length > threshold * 2)
          assert.ok((ctx.metrics.spillCount ?? 0) > 0, 'it spilled');
        assert.deepEqual(readdirSync(dir), []);
      },
    ),
    { numRuns: 80, seed: 3 },
  );
});

test('an early stop closes and deletes the runs', () => {
  const ctx: SpillContext = { dir, taskId: 9, threshold: 100, metrics: {} };
  const s = new ExternalSorter((x, y) => compareKeys(x, y), ctx);
  for (let i = 0; i < 1000; i++) s.insert((i * 7919) % 1000, 3);
  assert.ok(s.spilled);
  const first: unknown[] = [];
  s.drain((r) => first.push(r) >= 5);
  assert.deepEqual(first, [0, 1, 2, 3, 4]);
  assert.deepEqual(readdirSync(dir), []);
});
