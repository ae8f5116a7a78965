/**
 * The RDD operations that are more than a function per element, on real executors (a WickContext
 * in this test process, a real master and 2 workers × 1 core): zipWithIndex (a counting job
 * first, then per-partition start indices) and coalesce (parent partitions concatenated, no
 * shuffle), each against a plain in-memory version on random data, through unions, filters,
 * mapPartitions and shuffles.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import type { RDD } from '../../../backend/app/driver/RDD.js';
import { WickContext } from '../../../backend/app/index.js';
import { executorsRegistered, type SharedCluster, startSharedCluster } from '../../helpers/apps.js';

for (const k of ['WICK_MASTER', 'WICK_SUBMIT_CONF', 'WICK_APP_NAME', 'WICK_APP_DIR'])
  delete process.env[k];

let cluster: SharedCluster;
let wc: WickContext;

before(async () => {
  cluster = await startSharedCluster();
  wc = await WickContext.create({ master: cluster.url, appName: 'RDD operations under test' });
  await executorsRegistered(wc, 2);
});

after(async () => {
  await wc?.stop();
  await cluster?.stop();
});

const dataArb = fc.array(fc.integer({ min: -1000, max: 1000 }), { maxLength: 60 });
const slicesArb = fc.integer({ min: 1, max: 6 });
const runs = { numRuns: 10, seed: 13, endOnFailure: true };

test('zipWithIndex numbers elements in partition order, across unions, filters and a sort (property)', {
  timeout: 120_000,
}, async () => {
  await fc.assert(
    fc.asyncProperty(dataArb, dataArb, slicesArb, async (a, b, slices) => {
      const indexed = <T>(xs: T[]) => xs.map((x, i): [T, number] => [x, i]);
      const left = wc.parallelize(a, slices);
      const right = wc
        .range(0, b.length, 1, Math.max(1, slices - 1))
        .map((i, env) => env.b[i], { b });
      assert.deepEqual(await left.zipWithIndex().collect(), indexed(a));

      // A union: the index runs on through the second RDD's partitions.
      const even = (x: number) => x % 2 === 0;
      const union = left.filter(even).union(right as RDD<number>);
      const expected = indexed([...a.filter(even), ...b]);
      const zipped = union.zipWithIndex();
      assert.deepEqual(await zipped.collect(), expected);
      // Zipped, then in a union itself (its partitions no longer first), then transformed.
      assert.deepEqual(
        await wc
          .parallelize([99], 1)
          .map((x): [number, number] => [x, -1])
          .union(zipped.map(([x, i]): [number, number] => [x * 2, i]))
          .collect(),
        [[99, -1], ...expected.map(([x, i]) => [x * 2, i])],
      );
      // take stops early and still numbers from the partition's start.
      assert.deepEqual(await zipped.take(3), expected.slice(0, 3));
      // The sorted order's ranks (after a shuffle; each partition counted by the first job).
      const ranks = await left
        .sortBy((x) => x)
        .zipWithIndex()
        .collect();
      assert.deepEqual(ranks, indexed([...a].sort((x, y) => x - y)));
    }),
    runs,
  );
});

test('zipWithIndex counts its parent once, then reuses the indices in later jobs', {
  timeout: 60_000,
}, async () => {
  const jobs = () => wc.dagScheduler.stats.jobs;
  const zipped = wc.parallelize(['a', 'b', 'c', 'd', 'e'], 3).zipWithIndex();
  const before = jobs();
  assert.deepEqual(await zipped.collect(), [
    ['a', 0],
    ['b', 1],
    ['c', 2],
    ['d', 3],
    ['e', 4],
  ]);
  assert.equal(jobs() - before, 2, 'the counting job, then the collect');
  assert.equal(await zipped.map(([, i]) => i).sum(), 10);
  assert.equal(jobs() - before, 3, 'no second counting job');
});

test('coalesce concatenates neighbouring partitions in order, without a shuffle (property)', {
  timeout: 180_000,
}, async () => {
  await fc.assert(
    fc.asyncProperty(dataArb, dataArb, slicesArb, slicesArb, async (a, b, slices, n) => {
      const union = wc
        .parallelize(a, slices)
        .union(wc.range(0, b.length, 1, slices).map((i, env) => env.b[i], { b }) as RDD<number>);
      const all = [...a, ...b];
      const parts = union.numPartitions;
      const c = union.coalesce(n);
      assert.equal(c.numPartitions, Math.min(n, parts));
      assert.deepEqual(await c.collect(), all);
      // Each task reads its group whole: mapPartitions sees the groups' sizes.
      const sizes = await c.mapPartitions((xs) => [xs.length]).collect();
      assert.equal(sizes.length, Math.min(n, parts));
      assert.equal(
        sizes.reduce((x, y) => x + y, 0),
        all.length,
      );
      // A coalesce of a coalesce, with element-wise steps between, then zipped.
      const twice = c
        .map((x) => x + 1)
        .filter((x) => x % 3 !== 0)
        .coalesce(Math.max(1, n - 1));
      const plain = all.map((x) => x + 1).filter((x) => x % 3 !== 0);
      assert.deepEqual(await twice.collect(), plain);
      assert.deepEqual(
        await twice.zipWithIndex().collect(),
        plain.map((x, i) => [x, i]),
      );
      // After a sort: one partition, still in order (the idiom for one sorted output).
      const sorted = await wc
        .parallelize(a, slices)
        .sortBy((x) => x, true, 3)
        .coalesce(1)
        .collect();
      assert.deepEqual(
        sorted,
        [...a].sort((x, y) => x - y),
      );
      // Reduce partitions of a pair shuffle, grouped: each key still once, its sum right.
      const sums = new Map<number, number>();
      for (const x of all) sums.set(x % 5, (sums.get(x % 5) ?? 0) + x);
      const got = await union
        .map((x): [number, number] => [x % 5, x])
        .reduceByKey((x, y) => x + y, 4)
        .coalesce(2)
        .collect();
      assert.deepEqual(new Map(got), sums);
      assert.equal(got.length, sums.size);
    }),
    runs,
  );
});

test('coalesce with a shuffle is repartition; impossible coalesces say why and what to do instead', {
  timeout: 60_000,
}, async () => {
  const rdd = wc.parallelize([1, 2, 3, 4, 5, 6], 2);
  const wider = rdd.coalesce(4, true);
  assert.equal(wider.numPartitions, 4);
  assert.deepEqual((await wider.collect()).sort(), [1, 2, 3, 4, 5, 6]);
  // Without a shuffle, more partitions than there are is as many as there are (Spark's).
  assert.equal(rdd.coalesce(4).numPartitions, 2);
  assert.throws(
    () => rdd.coalesce(0),
    /coalesce expects a number of partitions from 1 to 100000, got 0/,
  );
  const mapped = rdd
    .coalesce(1)
    .mapPartitions((xs) => xs)
    .coalesce(1);
  await assert.rejects(
    mapped.collect(),
    /coalesce once, after the mapPartitions, or use repartition/,
  );
  // zipWithIndex between two coalesces: its count would start again in every part.
  await assert.rejects(
    rdd.coalesce(1).zipWithIndex().coalesce(1).collect(),
    /zipWithIndex after the last coalesce, or use repartition/,
  );
  assert.deepEqual(await rdd.coalesce(1).coalesce(1).zipWithIndex().collect(), [
    [1, 0],
    [2, 1],
    [3, 2],
    [4, 3],
    [5, 4],
    [6, 5],
  ]);
});
