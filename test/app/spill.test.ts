/**
 * Shuffles larger than memory, on real executors: 2 workers × 1 core, an application whose
 * executors have 48 MiB (wick.executor.memory) and spill past 256 KiB of buffered records, whose
 * reducers fetch past 256 KiB to disk. reduceByKey, groupByKey (no map-side combine) and sortByKey
 * of ~64 MiB of shuffle data give the right answers; the task metrics the driver hears show
 * spills on both sides, blocks fetched to disk, and bytes read = bytes written; no temporary
 * file is left, nor after a task that fails once it has spilled. Then the reduce-slot bound: with more reduce tasks queued on an executor than
 * cores + 1, no more than cores + 1 hold fetched blocks at once (the executor's log says how
 * many it holds as each takes a slot, and that some had to wait).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { addTaskMetrics, type TaskEnd, WickContext } from '../../backend/app/index.js';
import {
  eventually,
  executorsRegistered,
  type SharedCluster,
  startSharedCluster,
} from '../helpers/apps.js';
import { filesUnder } from '../helpers/localFiles.js';

for (const k of ['WICK_MASTER', 'WICK_SUBMIT_CONF', 'WICK_APP_NAME', 'WICK_APP_DIR'])
  delete process.env[k];

const localRoot = mkdtempSync(join(tmpdir(), 'wick-test-spill-local-'));
let cluster: SharedCluster;
let wc: WickContext;
const ends: TaskEnd[] = [];

/** Records of ~330 bytes: 200,000 of them are ~64 MiB of shuffle data, more than the memory. */
const N = 200_000;
const KEYS = 20_000;
const PAD = 'x'.repeat(300);

before(async () => {
  cluster = await startSharedCluster({ conf: { 'wick.local.dir': localRoot } });
  wc = await WickContext.create({
    master: cluster.url,
    appName: 'spill under test',
    conf: {
      'wick.executor.memory': '48m',
      'wick.shuffle.spill.memoryThreshold': '256k',
      'wick.reducer.maxSizeFetchToMem': '256k',
    },
  });
  wc.addListener({ onTaskEnd: (e) => void ends.push(e) });
  await executorsRegistered(wc, 2);
});

after(async () => {
  await wc?.stop();
  await cluster?.stop();
  rmSync(localRoot, { recursive: true, force: true });
});

/** Temporary shuffle files (spills, blocks fetched to disk) under the workers' local dirs. */
const tempFiles = () => filesUnder(localRoot, /^temp_/);

/** The metrics of the tasks that ended during `job`: map side and reduce side apart. */
async function measured<T>(job: () => Promise<T>): Promise<{
  result: T;
  map: ReturnType<typeof addTaskMetrics>;
  reduce: ReturnType<typeof addTaskMetrics>;
}> {
  const from = ends.length;
  const result = await job();
  const map = {};
  const reduce = {};
  for (const e of ends.slice(from)) {
    assert.equal(e.state, 'FINISHED', `task ${e.taskId} ended ${e.state}`);
    if (e.metrics?.shuffleWrite) addTaskMetrics(map, e.metrics);
    if (e.metrics?.shuffleRead) addTaskMetrics(reduce, e.metrics);
  }
  return { result, map, reduce };
}

function padded() {
  return wc
    .range(0, N, 1, 4)
    .map((i: number, env): [number, string] => [i % env.keys, `${env.pad}${i}`], {
      keys: KEYS,
      pad: PAD,
    });
}

function assertSpilledBothSides(m: Awaited<ReturnType<typeof measured>>, what: string): void {
  const written = m.map.shuffleWrite?.bytesWritten ?? 0;
  assert.ok(written > 48 * 2 ** 20, `${what}: ${written} bytes of shuffle, more than the memory`);
  assert.ok((m.map.spillCount ?? 0) >= 4, `${what}: map-side spills ${m.map.spillCount}`);
  assert.ok((m.reduce.spillCount ?? 0) >= 4, `${what}: reduce-side spills ${m.reduce.spillCount}`);
  const read = m.reduce.shuffleRead;
  assert.ok(read, `${what}: shuffle read metrics`);
  assert.equal(read.localBytesRead + read.remoteBytesRead, written, `${what}: bytes read`);
  assert.ok(read.remoteBytesReadToDisk > 0, `${what}: blocks fetched to disk`);
  assert.equal(read.recordsRead, m.map.shuffleWrite?.recordsWritten, `${what}: records read`);
}

test('groupByKey (no map-side combine) larger than memory: right groups, spills on both sides', {
  timeout: 240_000,
}, async () => {
  const m = await measured(() =>
    padded()
      .groupByKey(4)
      .map(
        ([k, vs], env): [number, number, number] => {
          let sum = 0;
          let misplaced = 0;
          for (const v of vs) {
            const i = Number(v.slice(300));
            sum += i;
            if (i % env.keys !== k) misplaced++;
          }
          return [vs.length, sum, misplaced + (vs.length === env.per ? 0 : 1)];
        },
        { keys: KEYS, per: N / KEYS },
      )
      .aggregate(
        [0, 0, 0] as [number, number, number],
        (a, b): [number, number, number] => [a[0] + b[0], a[1] + b[1], a[2] + b[2]],
        (a, b): [number, number, number] => [a[0] + b[0], a[1] + b[1], a[2] + b[2]],
      ),
  );
  assert.deepEqual(m.result, [N, (N * (N - 1)) / 2, 0], 'every value once, every key with its 10');
  assertSpilledBothSides(m, 'groupByKey');
  await eventually(AbortSignal.timeout(30_000), () =>
    tempFiles().length === 0 ? true : undefined,
  );
});

test('reduceByKey larger than memory: right sums, spills on both sides', {
  timeout: 240_000,
}, async () => {
  // Distinct keys: the map-side combine shrinks nothing, so it spills as its map grows.
  const m = await measured(() =>
    wc
      .range(0, N, 1, 4)
      .map((i: number, env): [string, number] => [`${env.pad}${i}`, i], { pad: PAD })
      .reduceByKey((a, b) => a + b, 4)
      .map(([k, v]): number => (Number(k.slice(300)) === v ? 1 : 0))
      .reduce((a, b) => a + b),
  );
  assert.equal(m.result, N, 'every key once with its value');
  assertSpilledBothSides(m, 'reduceByKey');
  await eventually(AbortSignal.timeout(30_000), () =>
    tempFiles().length === 0 ? true : undefined,
  );
});

test('sortByKey larger than memory: the records come out in key order, all of them', {
  timeout: 240_000,
}, async () => {
  type Run = { first: number; last: number; n: number; sorted: boolean } | null;
  const m = await measured(() =>
    wc
      .range(0, N, 1, 4)
      // A scrambled key order: 7919 is prime to N.
      .map((i: number, env): [number, string] => [(i * 7919) % env.n, env.pad], { n: N, pad: PAD })
      .sortByKey(true, 4)
      // Streamed (aggregate, not mapPartitions, which would hold a partition whole); the
      // partitions' results are combined in partition order.
      .aggregate<Run>(
        null,
        (acc, [k]) =>
          acc === null
            ? { first: k, last: k, n: 1, sorted: true }
            : { first: acc.first, last: k, n: acc.n + 1, sorted: acc.sorted && acc.last <= k },
        (a, b) =>
          a === null
            ? b
            : b === null
              ? a
              : {
                  first: a.first,
                  last: b.last,
                  n: a.n + b.n,
                  sorted: a.sorted && b.sorted && a.last <= b.first,
                },
      ),
  );
  assert.deepEqual(m.result, { first: 0, last: N - 1, n: N, sorted: true });
  assertSpilledBothSides(m, 'sortByKey');
  await eventually(AbortSignal.timeout(30_000), () =>
    tempFiles().length === 0 ? true : undefined,
  );
});

test('a map task that fails after it spilled leaves no spill file (its executor deletes them)', {
  timeout: 120_000,
}, async () => {
  const from = ends.length;
  await assert.rejects(
    wc
      .range(0, 40_000, 1, 2)
      .map(
        (i: number, env): [number, string] => {
          if (i === 39_999) throw new Error('a late failure');
          return [i, env.pad];
        },
        { pad: PAD },
      )
      .groupByKey(2)
      .count(),
    /a late failure/,
  );
  const failed = ends.slice(from).filter((e) => e.state === 'FAILED');
  assert.ok(failed.length >= 1, 'the task failed');
  assert.ok(
    failed.every((e) => (e.metrics?.spillCount ?? 0) > 0),
    'it had spilled when it failed',
  );
  await eventually(AbortSignal.timeout(30_000), () =>
    tempFiles().length === 0 ? true : undefined,
  );
});

test('no more than cores + 1 reduce tasks of an executor hold fetched blocks at once', {
  timeout: 120_000,
}, async () => {
  // Many short reduce tasks: the driver queues them ahead (prefetch), more than the slots.
  for (let round = 0; round < 3; round++) {
    const n = await wc
      .range(0, 20_000, 1, 4)
      .map((i: number): [number, number] => [i, i])
      .partitionBy(200)
      .count();
    assert.equal(n, 20_000);
  }
  const holds = /may hold fetched blocks: (\d+) of (\d+) reduce slots taken/g;
  // Every reduce task of the 3 jobs has taken its slot (the log is written as it goes).
  const log = await eventually(AbortSignal.timeout(30_000), () => {
    const text = cluster.executorOutput(wc.appId, 'stderr');
    return [...text.matchAll(holds)].length >= 600 ? text : undefined;
  });
  const held = [...log.matchAll(holds)];
  for (const [, n, of] of held) {
    assert.equal(of, '2', 'cores + 1 = 2 slots');
    assert.ok(Number(n) <= 2, `${n} reduce tasks held fetched blocks at once`);
  }
  // The bound was put to the test: tasks were queued beyond the slots and waited.
  assert.match(log, /waits for a reduce slot: 2 of 2 taken/);
  assert.ok(
    held.some(([, n]) => n === '2'),
    'the slots were all taken at times',
  );
});

test('coalesce of reduce partitions fetched to disk: each part read from its own file', {
  timeout: 120_000,
}, async () => {
  const n = 20_000;
  const m = await measured(() =>
    wc
      .range(0, n, 1, 4)
      .map((i: number, env): [string, number] => [`${env.pad}${i}`, i], { pad: PAD })
      .reduceByKey((a, b) => a + b, 4)
      .coalesce(2)
      .mapPartitions((kvs) => [kvs.length])
      .collect(),
  );
  assert.equal(m.result.length, 2, 'two tasks, each reading two reduce partitions');
  assert.equal(
    m.result.reduce((a, b) => a + b, 0),
    n,
    'every key once',
  );
  const read = m.reduce.shuffleRead;
  assert.ok(read && read.remoteBytesReadToDisk > 0, 'blocks fetched to disk');
  assert.equal(
    read.localBytesRead + read.remoteBytesRead,
    m.map.shuffleWrite?.bytesWritten,
    'every block of the four reduce partitions read once',
  );
  await eventually(AbortSignal.timeout(30_000), () =>
    tempFiles().length === 0 ? true : undefined,
  );
});
