/**
 * The DAGScheduler and MapOutputTracker driven by hand: a fake `submit` plays the executors
 * (map tasks return MapStatus objects), so the stage graph, skipped stages, lost outputs and
 * fetch-failure resubmits are checked without a cluster.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DAGScheduler } from '../../../../backend/app/driver/scheduler/DAGScheduler.js';
import { MapOutputTracker } from '../../../../backend/app/driver/scheduler/MapOutputTracker.js';
import type { RddPlan, ShuffleDependency } from '../../../../backend/app/driver/scheduler/plan.js';
import {
  FetchFailedJobError,
  type JobSpec,
} from '../../../../backend/app/driver/scheduler/TaskScheduler.js';
import type { PartitionSource } from '../../../../backend/protocol/task.js';

function source(n: number): RddPlan {
  const sources: PartitionSource[] = Array.from({ length: n }, (_, i) => ({
    kind: 'array',
    data: [i],
  }));
  return { segments: [{ sources: () => sources, transformations: [] }], deps: [] };
}

function shuffled(shuffleId: number, parent: RddPlan, reducers: number): RddPlan {
  const dep: ShuffleDependency = {
    shuffleId,
    parent,
    numPartitions: reducers,
    partitioner: async () => ({ kind: 'hash' }),
  };
  const sources: PartitionSource[] = Array.from({ length: reducers }, (_, reduceId) => ({
    kind: 'shuffle',
    shuffleId,
    reduceId,
    blocks: [],
  }));
  return { segments: [{ sources: () => sources, transformations: [] }], deps: [dep] };
}

/**
 * Records each task set; map tasks return a MapStatus on executor `on(partition)`, served where
 * `served(executor)` says (default: by the executor itself, at 127.0.0.1:1).
 */
function harness(
  on: (shuffleId: number, partition: number) => string = () => 'e1',
  served: (executorId: string) => { location: string; shuffleService?: true } = () => ({
    location: '127.0.0.1:1',
  }),
) {
  const sets: { kind: string; shuffleId?: number; partitions: number[]; spec: JobSpec }[] = [];
  let fail: ((spec: JobSpec) => Error | undefined) | undefined;
  const logs: string[] = [];
  const dag = new DAGScheduler(
    async (spec) => {
      const a = spec.action;
      const partitions = spec.partitions ?? spec.sources.map((_, i) => i);
      sets.push({
        kind: a.kind,
        ...(a.kind === 'shuffleWrite' ? { shuffleId: a.shuffleId } : {}),
        partitions,
        spec,
      });
      const err = fail?.(spec);
      if (err) throw err;
      if (a.kind === 'shuffleWrite') {
        return partitions.map((p) => ({
          ...served(on(a.shuffleId, p)),
          executorId: on(a.shuffleId, p),
          sizes: Array(a.numPartitions).fill(1),
          crc32s: Array(a.numPartitions).fill(0),
        }));
      }
      return spec.sources.map(() => 1);
    },
    4,
    { info: (t) => logs.push(t), warn: (t) => logs.push(t) },
  );
  return {
    dag,
    sets,
    logs,
    failWith: (f: typeof fail) => {
      fail = f;
    },
  };
}

test('a job runs its map stages parents first, then the result stage; reduce sources are located', async () => {
  const h = harness();
  const a = shuffled(0, source(3), 2);
  const b = shuffled(1, a, 4);
  assert.deepEqual(await h.dag.runJob(b, { kind: 'count' }), [1, 1, 1, 1]);
  assert.deepEqual(
    h.sets.map((s) => [s.kind, s.shuffleId, s.partitions.length]),
    [
      ['shuffleWrite', 0, 3],
      ['shuffleWrite', 1, 2],
      ['count', undefined, 4],
    ],
  );
  const reduce = h.sets[2]?.spec.sources[0] as Extract<PartitionSource, { kind: 'shuffle' }>;
  assert.equal(reduce.blocks.length, 2, 'one block per map output of shuffle 1');
  assert.deepEqual(reduce.blocks[1], {
    location: '127.0.0.1:1',
    executorId: 'e1',
    mapId: 1,
    size: 1,
    crc32: 0,
  });
});

test('a second job on the same shuffle skips its map stage', async () => {
  const h = harness();
  const plan = shuffled(0, source(2), 2);
  await h.dag.runJob(plan, { kind: 'count' });
  h.sets.length = 0;
  await h.dag.runJob(plan, { kind: 'collect' });
  assert.deepEqual(
    h.sets.map((s) => s.kind),
    ['collect'],
  );
  assert.equal(h.dag.stats.mapStagesSkipped, 1);
  assert.ok(h.logs.some((l) => /^Skipping ShuffleMapStage 0 \(shuffle 0\)/.test(l)));
});

test('a join: both parent stages run, each once, with concurrent jobs sharing a run', async () => {
  const h = harness();
  const left = shuffled(0, source(2), 2);
  const right = shuffled(1, source(3), 2);
  const joined: RddPlan = {
    segments: [...left.segments, ...right.segments],
    deps: [...left.deps, ...right.deps],
  };
  await Promise.all([
    h.dag.runJob(joined, { kind: 'count' }),
    h.dag.runJob(left, { kind: 'count' }),
  ]);
  const maps = h.sets.filter((s) => s.kind === 'shuffleWrite').map((s) => s.shuffleId);
  assert.deepEqual(maps.sort(), [0, 1]);
});

test('a lost executor takes its outputs: the next job reruns only those partitions', async () => {
  let lost = false;
  // A lost executor gets no more tasks: what ran on e2 runs on e3 after.
  const h = harness((_s, p) => (p % 2 === 0 ? 'e1' : lost ? 'e3' : 'e2'));
  const plan = shuffled(0, source(4), 2);
  await h.dag.runJob(plan, { kind: 'count' });
  lost = true;
  h.dag.executorLost('e2');
  h.sets.length = 0;
  await h.dag.runJob(plan, { kind: 'count' });
  assert.deepEqual(h.sets[0]?.partitions, [1, 3]);
  assert.ok(h.logs.some((l) => /Resubmitting ShuffleMapStage 0 \(shuffle 0\): 2 of 4/.test(l)));
});

test('a map output written by an executor lost before its stage ended runs again', async () => {
  let mapRuns = 0;
  // Partition 1 runs on e2 at first, then (e2 gone) on e3.
  const h = harness((_s, p) => (p === 1 ? (mapRuns === 1 ? 'e2' : 'e3') : 'e1'));
  h.failWith((spec) => {
    // e2 is lost while the stage's first task set runs (after its task finished).
    if (spec.action.kind === 'shuffleWrite' && ++mapRuns === 1) h.dag.executorLost('e2');
    return undefined;
  });
  await h.dag.runJob(shuffled(0, source(2), 1), { kind: 'count' });
  assert.deepEqual(
    h.sets.map((s) => [s.kind, s.partitions]),
    [
      ['shuffleWrite', [0, 1]],
      ['shuffleWrite', [1]],
      ['count', [0]],
    ],
  );
});

test('FetchFailed: the outputs of that executor are dropped, the parent reruns, then the stage', async () => {
  const h = harness((_s, p) => (p === 0 ? 'e1' : 'e2'));
  const plan = shuffled(0, source(2), 2);
  let failures = 1;
  h.failWith((spec) =>
    spec.action.kind === 'count' && failures-- > 0
      ? new FetchFailedJobError('gone', { shuffleId: 0, mapId: 1, executorId: 'e2' })
      : undefined,
  );
  assert.deepEqual(await h.dag.runJob(plan, { kind: 'count' }), [1, 1]);
  assert.deepEqual(
    h.sets.map((s) => [s.kind, s.partitions]),
    [
      ['shuffleWrite', [0, 1]],
      ['count', [0, 1]],
      ['shuffleWrite', [1]],
      ['count', [0, 1]],
    ],
  );
  assert.ok(
    h.logs.some((l) => /could not fetch map output 1 of shuffle 0 from executor e2/.test(l)),
  );
});

/** e1 and e2 on worker host h1, e3 on h2, each worker with its shuffle service on port 7337. */
const onServices = (e: string) => ({
  location: e === 'e3' ? 'h2:7337' : 'h1:7337',
  shuffleService: true as const,
});

test('with the shuffle service: a lost executor keeps the outputs its worker serves, no map task reruns', async () => {
  const h = harness((_s, p) => (p % 2 === 0 ? 'e1' : 'e3'), onServices);
  const plan = shuffled(0, source(4), 2);
  await h.dag.runJob(plan, { kind: 'count' });
  h.dag.executorLost('e3');
  h.sets.length = 0;
  await h.dag.runJob(plan, { kind: 'count' });
  assert.deepEqual(
    h.sets.map((s) => s.kind),
    ['count'],
  );
  assert.equal(h.dag.stats.stagesResubmitted, 0);
  assert.deepEqual(
    h.dag.mapOutputs.blocksFor(0, 0).map((b) => b.location),
    ['h1:7337', 'h2:7337', 'h1:7337', 'h2:7337'],
  );
});

test('with the shuffle service: an executor lost with its worker takes its outputs', async () => {
  const h = harness((_s, p) => (p % 2 === 0 ? 'e1' : 'e3'), onServices);
  await h.dag.runJob(shuffled(0, source(4), 2), { kind: 'count' });
  h.dag.executorLost('e3', true);
  assert.deepEqual(h.dag.mapOutputs.missing(0), [1, 3]);
});

test('with the shuffle service: a lost worker takes what its host served, whoever wrote it', async () => {
  const h = harness((_s, p) => ['e1', 'e2', 'e3'][p % 3] as string, onServices);
  await h.dag.runJob(shuffled(0, source(6), 2), { kind: 'count' });
  h.dag.executorLost('e2');
  assert.deepEqual(h.dag.mapOutputs.missing(0), [], 'e2 alone lost: its worker serves on');
  h.dag.workerRemoved('worker-1', 'h1');
  assert.deepEqual(h.dag.mapOutputs.missing(0), [0, 1, 3, 4], "h1's outputs (e1's and e2's)");
  assert.ok(
    h.logs.some((l) =>
      /Lost 4 map output\(s\) served by the shuffle service of worker worker-1 on h1/.test(l),
    ),
  );
});

test('with the shuffle service: a FetchFailed from a service drops all it serves', async () => {
  const h = harness((_s, p) => ['e1', 'e2', 'e3'][p % 3] as string, onServices);
  const plan = shuffled(0, source(3), 1);
  let failures = 1;
  h.failWith((spec) =>
    spec.action.kind === 'count' && failures-- > 0
      ? new FetchFailedJobError('gone', { shuffleId: 0, mapId: 0, executorId: 'e1' })
      : undefined,
  );
  await h.dag.runJob(plan, { kind: 'count' });
  assert.deepEqual(
    h.sets.map((s) => [s.kind, s.partitions]),
    [
      ['shuffleWrite', [0, 1, 2]],
      ['count', [0]],
      ['shuffleWrite', [0, 1]],
      ['count', [0]],
    ],
  );
});

test('with the shuffle service: an output of an executor lost before its stage ended is kept', async () => {
  const h = harness((_s, p) => (p === 1 ? 'e2' : 'e1'), onServices);
  let mapRuns = 0;
  h.failWith((spec) => {
    if (spec.action.kind === 'shuffleWrite' && ++mapRuns === 1) h.dag.executorLost('e2');
    return undefined;
  });
  await h.dag.runJob(shuffled(0, source(2), 1), { kind: 'count' });
  assert.deepEqual(
    h.sets.map((s) => [s.kind, s.partitions]),
    [
      ['shuffleWrite', [0, 1]],
      ['count', [0]],
    ],
  );
});

test('a resubmitted ResultStage runs only its partitions that had not finished', async () => {
  const h = harness((_s, p) => (p === 0 ? 'e1' : 'e2'));
  const plan = shuffled(0, source(2), 3);
  let failures = 1;
  h.failWith((spec) =>
    spec.action.kind === 'collect' && failures-- > 0
      ? new FetchFailedJobError(
          'gone',
          { shuffleId: 0, mapId: 1, executorId: 'e2' },
          new Map([[2, 'kept']]),
        )
      : undefined,
  );
  assert.deepEqual(await h.dag.runJob(plan, { kind: 'collect' }), [1, 1, 'kept']);
  assert.deepEqual(h.sets.at(-1)?.partitions, [0, 1]);
  assert.deepEqual(
    h.sets.at(-1)?.spec.sources.map((x) => (x as { reduceId: number }).reduceId),
    [0, 1],
  );
});

test('FetchFailed on every attempt: the job fails after wick.stage.maxConsecutiveAttempts', async () => {
  const h = harness();
  h.failWith((spec) =>
    spec.action.kind === 'count'
      ? new FetchFailedJobError('gone', { shuffleId: 0, mapId: 0, executorId: 'e1' })
      : undefined,
  );
  await assert.rejects(
    h.dag.runJob(shuffled(0, source(1), 1), { kind: 'count' }),
    /failed 4 consecutive times on fetch failures \(wick.stage.maxConsecutiveAttempts = 4\)/,
  );
});

test('a map task result that is not a MapStatus fails the job, naming it', async () => {
  const dag = new DAGScheduler(async () => [{ nope: true }], 4, { info() {}, warn() {} });
  await assert.rejects(
    dag.runJob(shuffled(0, source(1), 1), { kind: 'count' }),
    /Map task 0 of ShuffleMapStage 0 \(shuffle 0\) returned \{"nope":true\}, not a MapStatus with 1 sizes and CRC-32s/,
  );
});

test('MapOutputTracker: missing partitions, blocks per reducer, removal by executor', () => {
  const t = new MapOutputTracker();
  t.registerShuffle(3, 2);
  assert.deepEqual(t.missing(3), [0, 1]);
  const status = (e: string) => ({
    location: 'h:1',
    executorId: e,
    sizes: [5, 0],
    crc32s: [7, 0],
  });
  t.registerMapOutput(3, 0, status('a'));
  t.registerMapOutput(3, 1, status('b'));
  assert.deepEqual(t.missing(3), []);
  assert.deepEqual(
    t.blocksFor(3, 0).map((b) => [b.mapId, b.executorId, b.size, b.crc32]),
    [
      [0, 'a', 5, 7],
      [1, 'b', 5, 7],
    ],
  );
  assert.equal(t.bytesWritten(3), 10);
  assert.equal(t.removeOutputsOnExecutor('b'), 1);
  assert.deepEqual(t.missing(3), [1]);
  assert.throws(() => t.blocksFor(3, 0), /map output 1 is missing/);
  assert.throws(() => t.registerMapOutput(3, 2, status('a')), /no map partition 2/);
});

test('MapOutputTracker: outputs a shuffle service serves go by host or location, others stay', () => {
  const t = new MapOutputTracker();
  t.registerShuffle(0, 5);
  const put = (mapId: number, location: string, executorId: string, shuffleService?: true) =>
    t.registerMapOutput(0, mapId, {
      location,
      executorId,
      sizes: [1],
      crc32s: [0],
      ...(shuffleService ? { shuffleService } : {}),
    });
  put(0, '[::1]:7337', 'a', true);
  put(1, '[::1]:7338', 'b', true);
  put(2, '[::1]:40000', 'c');
  put(3, 'h2:7337', 'd', true);
  put(4, 'h2:7338', 'e', true);
  assert.equal(t.removeOutputsOnExecutor('a', true), 0, "kept: a's worker serves it");
  assert.equal(t.removeOutputsOnHost('::1'), 2, 'both services on ::1; not c, its own server');
  assert.deepEqual(t.missing(0), [0, 1]);
  assert.equal(t.removeOutputsAt('h2:7337'), 1);
  assert.deepEqual(t.missing(0), [0, 1, 3]);
  assert.equal(t.removeOutputsOnExecutor('e'), 1, 'without keepServiced, all of its outputs');
});
