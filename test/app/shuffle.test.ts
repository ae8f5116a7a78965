/**
 * Shuffles on real executors: a WickContext in this test process with a real master and 2
 * workers × 1 core. Every pair operation against a plain in-memory version on random data
 * (empty partitions, skewed keys, keys of every JSON type); WordCount of a generated corpus
 * against a plain count; two jobs sharing a shuffle (the second skips the map stage); a corrupt
 * block (FetchFailed, the map stage resubmitted); an executor SIGKILLed between the map and
 * reduce stages; and no shuffle file left once the application ends.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import type { RDD } from '../../backend/app/driver/RDD.js';
import { WickContext } from '../../backend/app/index.js';
import { canonicalJson, compareKeys } from '../../backend/app/shuffle/keys.js';
import { wickProtocol } from '../../backend/protocol/index.js';
import { FetchShuffleBlock, SHUFFLE_ENDPOINT } from '../../backend/protocol/shuffle.js';
import { RpcEnv } from '../../backend/rpc/index.js';
import {
  eventually,
  executorsRegistered,
  type SharedCluster,
  startSharedCluster,
} from '../helpers/apps.js';
import { waitUntilGone } from '../helpers/cli.js';
import { filesUnder, SHUFFLE_DATA } from '../helpers/localFiles.js';

for (const k of ['WICK_MASTER', 'WICK_SUBMIT_CONF', 'WICK_APP_NAME', 'WICK_APP_DIR'])
  delete process.env[k];

const localRoot = mkdtempSync(join(tmpdir(), 'wick-test-shuffle-local-'));
const dir = mkdtempSync(join(tmpdir(), 'wick-test-shuffle-'));
let cluster: SharedCluster;
let wc: WickContext;
const logLines: string[] = [];

before(async () => {
  cluster = await startSharedCluster({ conf: { 'wick.local.dir': localRoot } });
  wc = await WickContext.create({ master: cluster.url, appName: 'shuffle under test' });
  await executorsRegistered(wc, 2);
  // The driver's log, as a user reads it: the scheduler's decisions must be in it.
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    logLines.push(String(chunk));
    return (write as (...a: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stderr.write;
});

after(async () => {
  await wc?.stop();
  await cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
  rmSync(localRoot, { recursive: true, force: true });
});

/** Shuffle data files under the workers' local dirs. */
const shuffleFiles = () => filesUnder(localRoot, SHUFFLE_DATA);

const key = (k: unknown) => canonicalJson(k);
/** A multiset of records as sorted canonical texts (order-free comparison). */
const bag = (xs: unknown[]) => xs.map((x) => canonicalJson(x)).sort();
/** Groups as a Map by key text, in first-seen order. */
function groups<K, V>(pairs: [K, V][]): Map<string, [K, V[]]> {
  const m = new Map<string, [K, V[]]>();
  for (const [k, v] of pairs) {
    const had = m.get(key(k));
    if (had) had[1].push(v);
    else m.set(key(k), [k, [v]]);
  }
  return m;
}
const sortedVals = (vs: unknown[]) => [...vs].sort((a, b) => compareKeys(a, b));

// Keys of every JSON type, skewed: a few hot keys most of the time.
const keyArb = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom<unknown>('hot', 0, null) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
);
const pairsArb = fc.array(fc.tuple(keyArb, fc.integer({ min: -50, max: 50 })), { maxLength: 40 });
const slicesArb = fc.integer({ min: 1, max: 5 });
const reducersArb = fc.integer({ min: 1, max: 4 });
const runs = { numRuns: 8, seed: 19, endOnFailure: true };

test('pair operations match a plain in-memory version (property)', {
  timeout: 240_000,
}, async () => {
  await fc.assert(
    fc.asyncProperty(pairsArb, pairsArb, slicesArb, reducersArb, async (data, other, slices, n) => {
      const rdd = wc.parallelize(data, slices) as RDD<[unknown, number]>;
      const rdd2 = wc.parallelize(other, Math.max(1, slices - 1)) as RDD<[unknown, number]>;
      const g = groups(data);
      const g2 = groups(other);

      const sums = [...g.values()].map(([k, vs]) => [k, vs.reduce((a, b) => a + b, 0)]);
      assert.deepEqual(bag(await rdd.reduceByKey((a, b) => a + b, n).collect()), bag(sums));
      assert.deepEqual(
        bag(await rdd.foldByKey(0, (a, b) => a + b, n).collect()),
        bag(sums),
        'foldByKey',
      );
      const aggs = [...g.values()].map(([k, vs]) => [
        k,
        [vs.reduce((a, b) => a + b, 0), vs.length],
      ]);
      assert.deepEqual(
        bag(
          await rdd
            .aggregateByKey(
              [0, 0] as [number, number],
              (acc, v): [number, number] => [acc[0] + v, acc[1] + 1],
              (a, b): [number, number] => [a[0] + b[0], a[1] + b[1]],
              n,
            )
            .collect(),
        ),
        bag(aggs),
        'aggregateByKey',
      );
      assert.deepEqual(
        bag(
          await rdd
            .combineByKey(
              (v) => [v],
              (c: number[], v) => [...c, v],
              (a, b) => [...a, ...b],
              n,
            )
            .mapValues((vs) => vs.sort((a, b) => a - b))
            .collect(),
        ),
        bag([...g.values()].map(([k, vs]) => [k, sortedVals(vs)])),
        'combineByKey',
      );
      assert.deepEqual(
        bag((await rdd.groupByKey(n).collect()).map(([k, vs]) => [k, sortedVals(vs)])),
        bag([...g.values()].map(([k, vs]) => [k, sortedVals(vs)])),
        'groupByKey',
      );
      const counts = await rdd.countByKey();
      assert.deepEqual(
        bag([...counts.entries()]),
        bag([...g.values()].map(([k, vs]) => [k, vs.length])),
        'countByKey',
      );
      assert.deepEqual(
        bag(await rdd.mapValues((v) => v * 2).collect()),
        bag(data.map(([k, v]) => [k, v * 2])),
      );
      assert.deepEqual(
        bag(await rdd.flatMapValues((v) => [v, v]).collect()),
        bag(
          data.flatMap(([k, v]) => [
            [k, v],
            [k, v],
          ]),
        ),
      );
      assert.deepEqual(bag(await rdd.keys().collect()), bag(data.map((p) => p[0])));
      assert.deepEqual(bag(await rdd.values().collect()), bag(data.map((p) => p[1])));

      const partitioned = rdd.partitionBy(n);
      assert.equal(partitioned.numPartitions, n);
      const parts = await partitioned.mapPartitions((xs) => [xs.map((p) => p[0])]).collect();
      assert.deepEqual(
        bag(parts.flat()),
        bag(data.map((p) => p[0])),
        'partitionBy keeps the pairs',
      );
      for (const [i, ks] of parts.entries()) {
        for (const k of ks) {
          for (const [j, others] of parts.entries()) {
            if (j !== i)
              assert.ok(!others.some((o) => key(o) === key(k)), 'a key in one partition only');
          }
        }
      }

      // Joins: Spark's semantics on the same keys.
      const inner: unknown[] = [];
      const left: unknown[] = [];
      const right: unknown[] = [];
      const full: unknown[] = [];
      const cog: unknown[] = [];
      for (const [kt, [k, vs]] of g) {
        const ws = g2.get(kt)?.[1] ?? [];
        for (const v of vs) {
          if (ws.length === 0) left.push([k, [v, null]]);
          for (const w of ws) inner.push([k, [v, w]]);
        }
        cog.push([k, [sortedVals(vs), sortedVals(ws)]]);
      }
      for (const [kt, [k, ws]] of g2) {
        if (!g.has(kt)) cog.push([k, [[], sortedVals(ws)]]);
        const vs = g.get(kt)?.[1] ?? [];
        for (const w of ws) if (vs.length === 0) right.push([k, [null, w]]);
      }
      left.push(...inner);
      right.push(...inner);
      full.push(
        ...inner,
        ...left.filter((x) => (x as [unknown, unknown[]])[1][1] === null),
        ...right.filter((x) => (x as [unknown, unknown[]])[1][0] === null),
      );
      assert.deepEqual(bag(await rdd.join(rdd2, n).collect()), bag(inner), 'join');
      assert.deepEqual(bag(await rdd.leftOuterJoin(rdd2).collect()), bag(left), 'leftOuterJoin');
      assert.deepEqual(bag(await rdd.rightOuterJoin(rdd2).collect()), bag(right), 'rightOuterJoin');
      assert.deepEqual(bag(await rdd.fullOuterJoin(rdd2, n).collect()), bag(full), 'fullOuterJoin');
      assert.deepEqual(
        bag(
          (await rdd.cogroup(rdd2, n).collect()).map(([k, [vs, ws]]) => [
            k,
            [sortedVals(vs), sortedVals(ws)],
          ]),
        ),
        bag(cog),
        'cogroup',
      );

      // Sorts: keys in order across partitions, the same pairs.
      for (const ascending of [true, false]) {
        const sorted = await rdd.sortByKey(ascending, n).collect();
        assert.deepEqual(bag(sorted), bag(data));
        for (let i = 1; i < sorted.length; i++) {
          const c = compareKeys(
            (sorted[i - 1] as [unknown, number])[0],
            (sorted[i] as [unknown, number])[0],
          );
          assert.ok(ascending ? c <= 0 : c >= 0, `sortByKey(${ascending}) out of order at ${i}`);
        }
      }
      const values = data.map((p) => p[1]);
      const byValue = await wc
        .parallelize(values, slices)
        .sortBy((v) => -v, true, n)
        .collect();
      assert.deepEqual(
        byValue,
        [...values].sort((a, b) => b - a),
        'sortBy',
      );

      // On any RDD.
      assert.deepEqual(
        bag(await rdd.keys().distinct(n).collect()),
        bag([...g.values()].map(([k]) => k)),
        'distinct',
      );
      assert.deepEqual(
        bag(
          (
            await wc
              .parallelize(values, slices)
              .groupBy((v) => v % 3, n)
              .collect()
          ).map(([k, vs]) => [k, sortedVals(vs)]),
        ),
        bag(
          [...groups(values.map((v) => [v % 3, v])).values()].map(([k, vs]) => [k, sortedVals(vs)]),
        ),
        'groupBy',
      );
      const rep = wc.parallelize(values, slices).repartition(n);
      assert.equal(rep.numPartitions, n);
      assert.deepEqual(bag(await rep.collect()), bag(values), 'repartition');
      assert.deepEqual(bag(await rdd.union(rdd2).collect()), bag([...data, ...other]), 'union');
      assert.equal(
        await rdd.union(rdd2.mapValues((w) => w + 1)).count(),
        data.length + other.length,
      );
    }),
    runs,
  );
});

test('WordCount of a generated corpus matches a plain count; the sort gives the top words', {
  timeout: 120_000,
}, async () => {
  const rnd = fc.sample(fc.integer({ min: 0, max: 999 }), { numRuns: 60_000, seed: 7 });
  const vocab = Array.from({ length: 300 }, (_, i) => `w${i}é`);
  const lines: string[] = [];
  for (let i = 0; i < rnd.length; i += 12) {
    // A Zipf-like skew: low numbers far more often.
    lines.push(
      rnd
        .slice(i, i + 12)
        .map((r) => vocab[Math.floor((r * r) / 3334)])
        .join(i % 5 === 0 ? '  ' : ' '),
    );
  }
  const file = join(dir, 'corpus.txt');
  writeFileSync(file, `${lines.join('\n')}\n`);
  const expected = new Map<string, number>();
  for (const w of readFileSync(file, 'utf8').split(/\s+/))
    if (w) expected.set(w, (expected.get(w) ?? 0) + 1);

  const counts = wc
    .textFile(file, 4)
    .flatMap((line: string) => line.split(/\s+/))
    .filter((w) => w.length > 0)
    .map((w): [string, number] => [w, 1])
    .reduceByKey((a, b) => a + b, 3);
  assert.deepEqual(new Map(await counts.collect()), expected);
  const top = await counts.sortBy(([, n]) => n, false).take(20);
  const want = [...expected.entries()].sort((a, b) => b[1] - a[1]).slice(0, 20);
  assert.deepEqual(
    top.map((p) => p[1]),
    want.map((p) => p[1]),
  );
  for (const [w, n] of top) assert.equal(expected.get(w), n);
});

test('two jobs on one shuffle: the second skips the map stage', { timeout: 60_000 }, async () => {
  const stats = wc.dagScheduler.stats;
  const reduced = wc
    .range(0, 10_000, 1, 4)
    .map((x): [number, number] => [x % 17, 1])
    .reduceByKey((a, b) => a + b, 3);
  const before = { ...stats };
  assert.equal(await reduced.count(), 17);
  assert.equal(stats.mapStagesRun - before.mapStagesRun, 1);
  const mid = { ...stats };
  const all = await reduced.collect();
  assert.deepEqual(
    all.map((p) => p[1]).reduce((a, b) => a + b, 0),
    10_000,
  );
  assert.equal(stats.mapStagesRun, mid.mapStagesRun, 'the second job ran no map stage');
  assert.equal(stats.mapStagesSkipped - mid.mapStagesSkipped, 1);
  assert.ok(
    logLines.some((l) => /Skipping ShuffleMapStage \d+ \(shuffle \d+\): its 4 map outputs/.test(l)),
  );
});

test('a corrupt block fails its fetch (FetchFailed); the map stage reruns and the answer is right', {
  timeout: 60_000,
}, async () => {
  const stats = wc.dagScheduler.stats;
  const seen = new Set(shuffleFiles());
  const reduced = wc
    .range(0, 5000, 1, 2)
    .map((x): [number, number] => [x % 10, x])
    .reduceByKey((a, b) => a + b, 2);
  assert.equal(await reduced.count(), 10);
  const written = shuffleFiles().filter((f) => !seen.has(f));
  assert.equal(written.length, 2, 'one data file per map task');
  // Flip one byte of each (same size: only the checksum tells).
  for (const f of written) {
    const b = readFileSync(f);
    b[0] = b[0] === 0x5b ? 0x7b : 0x5b;
    writeFileSync(f, b);
  }
  const before = stats.stagesResubmitted;
  const want = new Map<number, number>();
  for (let x = 0; x < 5000; x++) want.set(x % 10, (want.get(x % 10) ?? 0) + x);
  assert.deepEqual(new Map(await reduced.collect()), want);
  assert.ok(stats.stagesResubmitted > before, 'a stage was resubmitted');
  assert.ok(
    logLines.some((l) =>
      /FetchFailed: Block shuffle_\d+_\d+_\d+ .* is corrupt: its CRC-32 is/.test(l),
    ),
  );
  assert.ok(logLines.some((l) => /Resubmitting ShuffleMapStage \d+ \(shuffle \d+\)/.test(l)));
});

test('an executor SIGKILLed between the map and reduce stages: its outputs rerun, the answer is right', {
  timeout: 120_000,
}, async () => {
  const stats = wc.dagScheduler.stats;
  const reduced = wc
    .range(0, 20_000, 1, 4)
    .map((x): [string, number] => [`k${x % 101}`, 1])
    .reduceByKey((a, b) => a + b, 3);
  // The map stage alone: a job that reads the shuffle runs it; then one executor dies.
  assert.equal(await reduced.count(), 101);
  const holders = new Set<string>();
  const tracker = wc.dagScheduler.mapOutputs as unknown as {
    shuffles: Map<number, ({ executorId: string } | undefined)[]>;
  };
  for (const outs of tracker.shuffles.values())
    for (const s of outs) if (s) holders.add(s.executorId);
  const victimId = [...holders][0] as string;
  const victim = cluster
    .others()
    .find((p) => p.cmdline.includes(`--executor-id ${victimId} `) && p.cmdline.includes(wc.appId));
  assert.ok(victim, `executor ${victimId}'s process`);
  const resubmittedBefore = stats.stagesResubmitted;
  process.kill(victim.pid, 'SIGKILL');
  await waitUntilGone([victim.pid]);
  const result = await reduced.collect();
  assert.equal(result.length, 101);
  for (const [, n] of result) assert.ok(n === 198 || n === 199, `count ${n}`);
  assert.equal(
    result.reduce((a, p) => a + p[1], 0),
    20_000,
  );
  assert.ok(stats.stagesResubmitted > resubmittedBefore, 'the map stage was resubmitted');
  assert.ok(
    logLines.some((l) =>
      /Resubmitting ShuffleMapStage \d+ \(shuffle \d+\): \d+ of 4 map outputs are missing/.test(l),
    ),
  );
});

test('a shuffle server lets in only its application: a peer without its key is refused', {
  timeout: 60_000,
}, async () => {
  const reduced = wc
    .range(0, 100, 1, 2)
    .map((x): [number, number] => [x % 3, 1])
    .reduceByKey((a, b) => a + b, 2);
  assert.equal(await reduced.count(), 3);
  const tracker = wc.dagScheduler.mapOutputs as unknown as {
    shuffles: Map<number, ({ location: string } | undefined)[]>;
  };
  const last = [...tracker.shuffles.values()].at(-1)?.[0];
  assert.ok(last, 'a map output');
  const stranger = await RpcEnv.create({
    protocol: wickProtocol,
    name: 'stranger',
    clientMode: true,
    auth: { credential: undefined, keys: undefined },
  });
  try {
    await assert.rejects(
      stranger
        .endpointRef({ address: last.location, name: SHUFFLE_ENDPOINT })
        .ask(FetchShuffleBlock({ shuffleId: 0, mapId: 0, reduceId: 0, offset: 0, length: 10 })),
      (err: Error) => /auth|secret|key/i.test(err.message),
    );
  } finally {
    await stranger.stop();
  }
});

test('no shuffle file is left once the application ends', { timeout: 60_000 }, async () => {
  assert.ok(shuffleFiles().length > 0, 'the tests above wrote shuffle files');
  await wc.stop();
  await eventually(AbortSignal.timeout(30_000), () =>
    shuffleFiles().length === 0 ? true : undefined,
  );
});
