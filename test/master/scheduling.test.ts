/**
 * Properties of the Master's pure schedule(), and a check against Spark's algorithm written out
 * naively (filter and sort every worker for every app, as Master.startExecutorsOnWorkers and
 * scheduleExecutorsOnWorkers do), so that the optimised version can be trusted to assign the same.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  type DriverAssignment,
  type ExecutorAssignment,
  type SchedApp,
  type SchedDriver,
  type ScheduleInput,
  type ScheduleResult,
  type SchedWorker,
  schedule,
  waitingReason,
  waterFill,
} from '../../backend/master/scheduling.js';
import {
  MAX_CLUSTER_CORES,
  MAX_MEMORY_MB,
  MAX_WORKER_CORES,
} from '../../backend/protocol/bounds.js';
import { seeded } from '../helpers/seeded.js';

// Generators ------------------------------------------------------------------------------------

const memory = fc.constantFrom(0, 128, 256, 512, 768, 1024, 2048, 4096);

const workersArb = (max = 10) =>
  fc
    .array(fc.record({ coresFree: fc.integer({ min: 0, max: 12 }), memoryFree: memory }), {
      maxLength: max,
    })
    .map((ws) => ws.map((w, i): SchedWorker => ({ id: `w${i}`, ...w })));

const appArb: fc.Arbitrary<Omit<SchedApp, 'id'>> = fc.record(
  {
    coresLeft: fc.oneof(fc.integer({ min: 0, max: 40 }), fc.constant(2147483647)),
    memoryPerExecutorMB: fc.constantFrom(128, 256, 512, 1024, 2048),
    coresPerExecutor: fc.integer({ min: 1, max: 4 }),
    executorCount: fc.integer({ min: 0, max: 3 }),
    executorLimit: fc.integer({ min: 0, max: 8 }),
  },
  { requiredKeys: ['coresLeft', 'memoryPerExecutorMB'] },
);

const appsArb = (max = 6) =>
  fc
    .array(appArb, { maxLength: max })
    .map((as) => as.map((a, i): SchedApp => ({ id: `app-${i}`, ...a })));

const driversArb = (max = 4) =>
  fc
    .array(
      fc.record({
        mem: fc.constantFrom(128, 512, 1024),
        cores: fc.integer({ min: 1, max: 2 }),
      }),
      { maxLength: max },
    )
    .map((ds) => ds.map((d, i): SchedDriver => ({ id: `driver-${i}`, ...d })));

const inputArb = fc.record({
  drivers: driversArb(),
  apps: appsArb(),
  workers: workersArb(),
  spreadOut: fc.boolean(),
  seed: fc.integer(),
});

type GenInput = Omit<ScheduleInput, 'random'> & { seed: number };

/** Makes schedule()'s Fisher–Yates shuffle the identity (j = i at every step). */
const noShuffle = () => 1 - Number.EPSILON;

function run(g: GenInput, random: () => number = seeded(g.seed)): ScheduleResult {
  return schedule({
    drivers: g.drivers,
    apps: g.apps,
    workers: g.workers,
    spreadOut: g.spreadOut,
    random,
  });
}

// Helpers over a result -------------------------------------------------------------------------

type Free = { coresFree: number; memoryFree: number };

function freeAfter(
  workers: readonly SchedWorker[],
  drivers: readonly SchedDriver[],
  result: { drivers: readonly DriverAssignment[]; executors: readonly ExecutorAssignment[] },
): Map<string, Free> {
  const free = new Map(
    workers.map((w) => [w.id, { coresFree: w.coresFree, memoryFree: w.memoryFree }]),
  );
  const driverById = new Map(drivers.map((d) => [d.id, d]));
  for (const d of result.drivers) {
    const w = free.get(d.workerId) as Free;
    const desc = driverById.get(d.driverId) as SchedDriver;
    w.coresFree -= desc.cores;
    w.memoryFree -= desc.mem;
  }
  for (const e of result.executors) {
    const w = free.get(e.workerId) as Free;
    w.coresFree -= e.cores;
    w.memoryFree -= e.memory;
  }
  return free;
}

const minCoresOf = (a: SchedApp) => a.coresPerExecutor ?? 1;

/** Workers sorted by free cores, most first; ties in the given order. */
function sortedByFreeCores<T extends { coresFree: number }>(ws: readonly T[]): T[] {
  return ws
    .map((w, i) => ({ w, i }))
    .sort((a, b) => b.w.coresFree - a.w.coresFree || a.i - b.i)
    .map(({ w }) => w);
}

// Spark's algorithm, naively --------------------------------------------------------------------

/**
 * Master.schedule() as Spark writes it: drivers round-robin over the (already shuffled) workers;
 * then, for every app in order, filter the usable workers, sort them by free cores and run
 * scheduleExecutorsOnWorkers, then allocate. Ties in the sort keep the given order.
 */
function sparkSchedule(input: Omit<ScheduleInput, 'random'>): ScheduleResult {
  const workers = input.workers.map((w) => ({ ...w }));
  const drivers: DriverAssignment[] = [];
  const n = workers.length;
  let curPos = 0;
  for (const driver of input.drivers) {
    let launched = false;
    let visited = 0;
    while (visited < n && !launched) {
      const w = workers[curPos] as SchedWorker;
      visited++;
      if (w.memoryFree >= driver.mem && w.coresFree >= driver.cores) {
        w.memoryFree -= driver.mem;
        w.coresFree -= driver.cores;
        drivers.push({ driverId: driver.id, workerId: w.id });
        launched = true;
      }
      curPos = (curPos + 1) % n;
    }
  }

  const executors: ExecutorAssignment[] = [];
  for (const app of input.apps) {
    if (app.coresLeft <= 0) continue;
    const usable = sortedByFreeCores(
      workers.filter(
        (w) => w.memoryFree >= app.memoryPerExecutorMB && w.coresFree >= minCoresOf(app),
      ),
    );
    const assigned = scheduleExecutorsOnWorkers(app, usable, input.spreadOut);
    usable.forEach((w, pos) => {
      const cores = assigned[pos] as number;
      if (cores <= 0) return;
      const per = app.coresPerExecutor;
      const count = per === undefined ? 1 : Math.floor(cores / per);
      for (let i = 0; i < count; i++) {
        executors.push({
          appId: app.id,
          workerId: w.id,
          cores: per ?? cores,
          memory: app.memoryPerExecutorMB,
        });
        w.coresFree -= per ?? cores;
        w.memoryFree -= app.memoryPerExecutorMB;
      }
    });
  }
  return { drivers, executors };
}

function scheduleExecutorsOnWorkers(
  app: SchedApp,
  usable: readonly SchedWorker[],
  spreadOut: boolean,
): number[] {
  const minCores = minCoresOf(app);
  const oneExecutorPerWorker = app.coresPerExecutor === undefined;
  const mem = app.memoryPerExecutorMB;
  const limit = app.executorLimit ?? Number.POSITIVE_INFINITY;
  const assignedCores = usable.map(() => 0);
  const assignedExecutors = usable.map(() => 0);
  let coresToAssign = Math.min(
    app.coresLeft,
    usable.reduce((s, w) => s + w.coresFree, 0),
  );
  const sum = (xs: number[]) => xs.reduce((s, x) => s + x, 0);

  const canLaunchExecutor = (pos: number): boolean => {
    const w = usable[pos] as SchedWorker;
    const keepScheduling = coresToAssign >= minCores;
    const enoughCores = w.coresFree - (assignedCores[pos] as number) >= minCores;
    const launchingNew = !oneExecutorPerWorker || assignedExecutors[pos] === 0;
    if (launchingNew) {
      const assignedMemory = (assignedExecutors[pos] as number) * mem;
      const enoughMemory = w.memoryFree - assignedMemory >= mem;
      const underLimit = sum(assignedExecutors) + (app.executorCount ?? 0) < limit;
      return keepScheduling && enoughCores && enoughMemory && underLimit;
    }
    return keepScheduling && enoughCores;
  };

  let freeWorkers = usable.map((_, i) => i).filter(canLaunchExecutor);
  while (freeWorkers.length > 0) {
    for (const pos of freeWorkers) {
      let keepScheduling = true;
      while (keepScheduling && canLaunchExecutor(pos)) {
        coresToAssign -= minCores;
        assignedCores[pos] = (assignedCores[pos] as number) + minCores;
        if (oneExecutorPerWorker) assignedExecutors[pos] = 1;
        else assignedExecutors[pos] = (assignedExecutors[pos] as number) + 1;
        if (spreadOut) keepScheduling = false;
      }
    }
    freeWorkers = freeWorkers.filter(canLaunchExecutor);
  }
  return assignedCores;
}

// Resources ---------------------------------------------------------------------------------------

test('never over-commits a worker: drivers and executors together fit its free cores and memory', () => {
  fc.assert(
    fc.property(inputArb, (g) => {
      const r = run(g);
      for (const [id, free] of freeAfter(g.workers, g.drivers, r)) {
        assert.ok(free.coresFree >= 0, `${id} over-committed on cores: ${free.coresFree}`);
        assert.ok(free.memoryFree >= 0, `${id} over-committed on memory: ${free.memoryFree}`);
      }
      for (const e of r.executors) assert.ok(e.cores > 0, 'no executor without cores');
    }),
    { numRuns: 500 },
  );
});

test('never gives an app more cores than it has left, nor more executors than its limit', () => {
  fc.assert(
    fc.property(inputArb, (g) => {
      const r = run(g);
      for (const app of g.apps) {
        const mine = r.executors.filter((e) => e.appId === app.id);
        const cores = mine.reduce((s, e) => s + e.cores, 0);
        assert.ok(cores <= Math.max(0, app.coresLeft), `${app.id}: ${cores} > ${app.coresLeft}`);
        if (app.executorLimit !== undefined) {
          const room = Math.max(0, app.executorLimit - (app.executorCount ?? 0));
          assert.ok(mine.length <= room, `${app.id}: ${mine.length} new executors > ${room}`);
        }
        for (const e of mine) assert.equal(e.memory, app.memoryPerExecutorMB);
      }
      const known = new Set(g.apps.map((a) => a.id));
      for (const e of r.executors) assert.ok(known.has(e.appId));
    }),
    { numRuns: 300 },
  );
});

test('with cores per executor, every executor has exactly those cores and the memory asked', () => {
  fc.assert(
    fc.property(inputArb, (g) => {
      const r = run(g);
      for (const app of g.apps) {
        if (app.coresPerExecutor === undefined) continue;
        for (const e of r.executors.filter((x) => x.appId === app.id)) {
          assert.equal(e.cores, app.coresPerExecutor);
          assert.equal(e.memory, app.memoryPerExecutorMB);
        }
      }
    }),
    { numRuns: 300 },
  );
});

test('without cores per executor, an app gets at most one executor per worker in one call', () => {
  fc.assert(
    fc.property(inputArb, (g) => {
      const r = run(g);
      const seen = new Set<string>();
      for (const e of r.executors) {
        const app = g.apps.find((a) => a.id === e.appId) as SchedApp;
        if (app.coresPerExecutor !== undefined) continue;
        const key = `${e.appId}@${e.workerId}`;
        assert.ok(!seen.has(key), `two executors for ${key}`);
        seen.add(key);
      }
    }),
    { numRuns: 300 },
  );
});

// Spread-out and packing ----------------------------------------------------------------------------

test('spread-out spreads one app evenly over identical workers', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 12 }),
      fc.integer({ min: 0, max: 16 }),
      memory,
      appArb.map((a): SchedApp => ({ ...a, id: 'app-0', executorLimit: undefined })),
      (n, cores, mem, app) => {
        const workers = Array.from({ length: n }, (_, i) => ({
          id: `w${i}`,
          coresFree: cores,
          memoryFree: mem,
        }));
        const r = schedule({ drivers: [], apps: [app], workers, spreadOut: true });
        const per = workers.map((w) =>
          r.executors.filter((e) => e.workerId === w.id).reduce((s, e) => s + e.cores, 0),
        );
        const spread = Math.max(...per) - Math.min(...per);
        assert.ok(
          spread <= minCoresOf(app),
          `per-worker cores ${per.join(',')} differ by ${spread} > ${minCoresOf(app)}`,
        );
      },
    ),
    { numRuns: 300 },
  );
});

test('spread-out on 3 workers × 4 cores gives an app of 6 cores 2 on each; packing gives 4 + 2', () => {
  const workers = ['a', 'b', 'c'].map((id) => ({ id, coresFree: 4, memoryFree: 4096 }));
  const app: SchedApp = { id: 'app', coresLeft: 6, memoryPerExecutorMB: 512 };
  const spread = schedule({ drivers: [], apps: [app], workers, spreadOut: true });
  assert.deepEqual(
    spread.executors.map((e) => [e.workerId, e.cores]),
    [
      ['a', 2],
      ['b', 2],
      ['c', 2],
    ],
  );
  const packed = schedule({ drivers: [], apps: [app], workers, spreadOut: false });
  assert.deepEqual(
    packed.executors.map((e) => [e.workerId, e.cores]),
    [
      ['a', 4],
      ['b', 2],
    ],
  );
});

test('packing fills one worker before the next, in order of free cores', () => {
  fc.assert(
    fc.property(inputArb, (g) => {
      const spreadOut = false;
      const r = run({ ...g, spreadOut });
      // Replay: the workers' state when each app's turn comes.
      const free = freeAfter(g.workers, g.drivers, { drivers: r.drivers, executors: [] });
      for (const app of g.apps) {
        const mine = r.executors.filter((e) => e.appId === app.id);
        const minCores = minCoresOf(app);
        const mem = app.memoryPerExecutorMB;
        const usableBefore = sortedByFreeCores(
          g.workers
            .map((w) => ({ id: w.id, ...(free.get(w.id) as Free) }))
            .filter((w) => w.coresFree >= minCores && w.memoryFree >= mem),
        ).map((w) => w.id);
        for (const e of mine) {
          const f = free.get(e.workerId) as Free;
          f.coresFree -= e.cores;
          f.memoryFree -= e.memory;
        }
        const touched = usableBefore.filter((id) => mine.some((e) => e.workerId === id));
        // The workers it touched are the first ones in order: it never skips a usable worker.
        assert.deepEqual(touched, usableBefore.slice(0, touched.length), `${app.id} skipped one`);
        // Of those, only the last may still have room for more of this app.
        const roomy = touched.filter((id) => {
          const f = free.get(id) as Free;
          return (
            f.coresFree >= minCores && (app.coresPerExecutor === undefined || f.memoryFree >= mem)
          );
        });
        assert.ok(roomy.length <= 1, `${app.id} left ${roomy.join(', ')} partly used`);
        if (roomy.length === 1) assert.equal(roomy[0], touched[touched.length - 1]);
      }
    }),
    { numRuns: 500 },
  );
});

// FIFO ----------------------------------------------------------------------------------------------

test('FIFO: an earlier app is never starved by a later one', () => {
  fc.assert(
    fc.property(inputArb, (g) => {
      const r = run(g);
      const end = freeAfter(g.workers, g.drivers, r);
      g.apps.forEach((a, i) => {
        const mine = r.executors.filter((e) => e.appId === a.id);
        const laterGotCores = g.apps
          .slice(i + 1)
          .some((b) => r.executors.some((e) => e.appId === b.id));
        if (!laterGotCores) return;
        const minCores = minCoresOf(a);
        const granted = mine.reduce((s, e) => s + e.cores, 0);
        const wantsMore = a.coresLeft - granted >= minCores;
        const newExecutorAllowed =
          (a.executorCount ?? 0) + mine.length < (a.executorLimit ?? Number.POSITIVE_INFINITY);
        // Where could it still have gone? A new executor, or (one per worker) more cores for one.
        const usable = [...end].filter(
          ([id, f]) =>
            f.coresFree >= minCores &&
            ((newExecutorAllowed && f.memoryFree >= a.memoryPerExecutorMB) ||
              (a.coresPerExecutor === undefined && mine.some((e) => e.workerId === id))),
        );
        assert.ok(
          !wantsMore || usable.length === 0,
          `${a.id} got ${granted} of ${a.coresLeft} while a later app got cores and ${usable
            .map(([id]) => id)
            .join(', ')} had room`,
        );
      });
    }),
    { numRuns: 500 },
  );
});

test('FIFO on one 4-core worker: the first app takes all it wants, the second gets the rest', () => {
  const workers = [{ id: 'w', coresFree: 4, memoryFree: 8192 }];
  const apps: SchedApp[] = [
    { id: 'first', coresLeft: 3, memoryPerExecutorMB: 512 },
    { id: 'second', coresLeft: 10, memoryPerExecutorMB: 512 },
    { id: 'third', coresLeft: 10, memoryPerExecutorMB: 512 },
  ];
  const r = schedule({ drivers: [], apps, workers, spreadOut: true });
  assert.deepEqual(r.executors, [
    { appId: 'first', workerId: 'w', cores: 3, memory: 512 },
    { appId: 'second', workerId: 'w', cores: 1, memory: 512 },
  ]);
});

// Drivers ---------------------------------------------------------------------------------------------

test('a driver is placed only where its memory and cores fit; one left waiting fitted nowhere', () => {
  fc.assert(
    fc.property(inputArb, (g) => {
      const r = run(g);
      const placed = new Map(r.drivers.map((d) => [d.driverId, d.workerId]));
      assert.equal(placed.size, r.drivers.length, 'a driver placed twice');
      const free = new Map(g.workers.map((w) => [w.id, { ...w }]));
      for (const d of g.drivers) {
        const at = placed.get(d.id);
        if (at === undefined) {
          const fits = [...free.values()].filter(
            (w) => w.memoryFree >= d.mem && w.coresFree >= d.cores,
          );
          assert.deepEqual(
            fits.map((w) => w.id),
            [],
            `${d.id} left waiting`,
          );
          continue;
        }
        const w = free.get(at) as SchedWorker;
        assert.ok(w.memoryFree >= d.mem && w.coresFree >= d.cores, `${d.id} does not fit ${at}`);
        w.memoryFree -= d.mem;
        w.coresFree -= d.cores;
      }
      // Drivers come first: placed in their order.
      assert.deepEqual(
        r.drivers.map((d) => d.driverId),
        g.drivers.filter((d) => placed.has(d.id)).map((d) => d.id),
      );
    }),
    { numRuns: 300 },
  );
});

test('drivers go round-robin: on workers with room for all, no worker gets two before each has one', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 8 }),
      fc.integer({ min: 0, max: 20 }),
      fc.integer(),
      (n, k, seed) => {
        const workers = Array.from({ length: n }, (_, i) => ({
          id: `w${i}`,
          coresFree: 100,
          memoryFree: 100_000,
        }));
        const drivers = Array.from({ length: k }, (_, i) => ({
          id: `driver-${i}`,
          mem: 512,
          cores: 1,
        }));
        const r = schedule({ drivers, apps: [], workers, spreadOut: true, random: seeded(seed) });
        assert.equal(r.drivers.length, k);
        const counts = workers.map((w) => r.drivers.filter((d) => d.workerId === w.id).length);
        assert.ok(Math.max(...counts) - Math.min(...counts) <= 1, `counts ${counts.join(',')}`);
      },
    ),
  );
});

test('drivers round-robin from where the last one went, skipping workers without room', () => {
  const workers = [
    { id: 'a', coresFree: 1, memoryFree: 1024 },
    { id: 'b', coresFree: 0, memoryFree: 4096 },
    { id: 'c', coresFree: 4, memoryFree: 4096 },
  ];
  const drivers = ['d0', 'd1', 'd2', 'd3'].map((id) => ({ id, mem: 1024, cores: 1 }));
  const r = schedule({ drivers, apps: [], workers, spreadOut: true, random: noShuffle });
  assert.deepEqual(
    r.drivers.map((d) => [d.driverId, d.workerId]),
    [
      ['d0', 'a'],
      ['d1', 'c'],
      ['d2', 'c'],
      ['d3', 'c'],
    ],
  );
});

test('drivers take their resources before executors are placed', () => {
  const workers = [{ id: 'w', coresFree: 4, memoryFree: 2048 }];
  const r = schedule({
    drivers: [{ id: 'driver-0', mem: 1024, cores: 1 }],
    apps: [{ id: 'app', coresLeft: 100, memoryPerExecutorMB: 1024 }],
    workers,
    spreadOut: true,
    random: noShuffle,
  });
  assert.deepEqual(r.drivers, [{ driverId: 'driver-0', workerId: 'w' }]);
  assert.deepEqual(r.executors, [{ appId: 'app', workerId: 'w', cores: 3, memory: 1024 }]);
});

// Determinism -------------------------------------------------------------------------------------

test('the same seed gives the same assignments, and the input is not modified', () => {
  fc.assert(
    fc.property(inputArb, (g) => {
      const before = structuredClone({ drivers: g.drivers, apps: g.apps, workers: g.workers });
      const a = run(g);
      const b = run(g);
      assert.deepEqual(a, b);
      assert.deepEqual({ drivers: g.drivers, apps: g.apps, workers: g.workers }, before);
    }),
    { numRuns: 200 },
  );
});

// Against Spark's algorithm -------------------------------------------------------------------------

test('assigns exactly what Spark’s naive algorithm assigns', () => {
  fc.assert(
    fc.property(inputArb, (g) => {
      const expected = sparkSchedule(g);
      const actual = run(g, noShuffle);
      assert.deepEqual(actual, expected);
    }),
    { numRuns: 2000 },
  );
});

test('assigns exactly what Spark’s naive algorithm assigns, on bigger clusters with many ties', () => {
  const bigInput = fc.record({
    drivers: driversArb(20),
    apps: appsArb(60),
    workers: fc
      .array(
        fc.record({
          coresFree: fc.constantFrom(0, 1, 2, 4, 8, 16),
          memoryFree: fc.constantFrom(0, 512, 1024, 4096, 16384),
        }),
        { maxLength: 80 },
      )
      .map((ws) => ws.map((w, i): SchedWorker => ({ id: `w${i}`, ...w }))),
    spreadOut: fc.boolean(),
    seed: fc.integer(),
  });
  fc.assert(
    fc.property(bigInput, (g) => {
      assert.deepEqual(run(g, noShuffle), sparkSchedule(g));
    }),
    { numRuns: 150 },
  );
});

test('assigns exactly what Spark’s naive algorithm assigns, with hundreds of cores per worker (many rounds each)', () => {
  // Beyond 256 free cores the workers are kept in a sorted array rather than buckets, and a
  // spread-out app takes hundreds of rounds: the water-filling must match them turn by turn.
  const manyCores = fc.record({
    drivers: driversArb(3),
    apps: fc
      .array(
        fc.record(
          {
            coresLeft: fc.oneof(fc.integer({ min: 0, max: 3000 }), fc.constant(2147483647)),
            memoryPerExecutorMB: fc.constantFrom(0, 128, 512, 1024),
            coresPerExecutor: fc.integer({ min: 1, max: 40 }),
            executorCount: fc.integer({ min: 0, max: 3 }),
            executorLimit: fc.integer({ min: 0, max: 200 }),
          },
          { requiredKeys: ['coresLeft', 'memoryPerExecutorMB'] },
        ),
        { maxLength: 5 },
      )
      .map((as) => as.map((a, i): SchedApp => ({ id: `app-${i}`, ...a }))),
    workers: fc
      .array(
        fc.record({
          coresFree: fc.oneof(fc.integer({ min: 0, max: 600 }), fc.constantFrom(0, 1, 300)),
          memoryFree: fc.constantFrom(0, 512, 4096, 65536, 1 << 20),
        }),
        { maxLength: 12 },
      )
      .map((ws) => ws.map((w, i): SchedWorker => ({ id: `w${i}`, ...w }))),
    spreadOut: fc.boolean(),
    seed: fc.integer(),
  });
  fc.assert(
    fc.property(manyCores, (g) => {
      assert.deepEqual(run(g, noShuffle), sparkSchedule(g));
    }),
    { numRuns: 400 },
  );
});

test('waterFill gives round-robin shares: equal rounds, the partial last round to the first', () => {
  assert.deepEqual(waterFill([5, 5, 5], 7), [3, 2, 2]);
  assert.deepEqual(waterFill([1, 5, 5], 7), [1, 3, 3]);
  assert.deepEqual(waterFill([1, 5, 5], 8), [1, 4, 3]);
  assert.deepEqual(waterFill([2, 2], 10), [2, 2]);
  assert.deepEqual(waterFill([3, 1, 3], 0), [0, 0, 0]);
  assert.deepEqual(waterFill([10 ** 9, 10 ** 9], 10 ** 9 + 1), [5 * 10 ** 8 + 1, 5 * 10 ** 8]);
  fc.assert(
    fc.property(
      fc.array(fc.integer({ min: 0, max: 50 }), { maxLength: 10 }),
      fc.integer({ min: 0, max: 600 }),
      (caps, budget) => {
        // The naive round-robin, one grant per worker per turn.
        const naive = caps.map(() => 0);
        let left = budget;
        for (let progress = true; progress && left > 0; ) {
          progress = false;
          for (let i = 0; i < caps.length && left > 0; i++) {
            if ((naive[i] as number) < (caps[i] as number)) {
              naive[i] = (naive[i] as number) + 1;
              left--;
              progress = true;
            }
          }
        }
        assert.deepEqual(waterFill(caps, budget), naive);
      },
    ),
    { numRuns: 500 },
  );
});

test('a worker with the most cores a worker may offer, and an app that wants them all, schedule at once', () => {
  // One turn per core took 128 s at 10^9 cores; now the steps go by workers. The time bound is a
  // generous liveness check, not a benchmark.
  const started = performance.now();
  const one = schedule({
    drivers: [],
    apps: [{ id: 'greedy', coresLeft: MAX_CLUSTER_CORES, memoryPerExecutorMB: 1024 }],
    workers: [{ id: 'huge', coresFree: MAX_WORKER_CORES, memoryFree: MAX_MEMORY_MB }],
    spreadOut: true,
  });
  assert.deepEqual(one.executors, [
    { appId: 'greedy', workerId: 'huge', cores: MAX_WORKER_CORES, memory: 1024 },
  ]);
  // 10^9 cores in all, on 10,000 workers, spread and packed.
  const workers = Array.from({ length: 10_000 }, (_, i) => ({
    id: `w${i}`,
    coresFree: MAX_WORKER_CORES,
    memoryFree: MAX_MEMORY_MB,
  }));
  for (const spreadOut of [true, false]) {
    const r = schedule({
      drivers: [],
      apps: [{ id: 'greedy', coresLeft: 10 ** 9 - 7, memoryPerExecutorMB: 1024 }],
      workers,
      spreadOut,
    });
    assert.equal(r.executors.length, 10_000);
    assert.equal(
      r.executors.reduce((n, e) => n + e.cores, 0),
      10 ** 9 - 7,
    );
  }
  // With cores per executor, one executor per grant: as many as its limit allows.
  const limited = schedule({
    drivers: [],
    apps: [
      {
        id: 'wide',
        coresLeft: MAX_CLUSTER_CORES,
        memoryPerExecutorMB: 1,
        coresPerExecutor: 1,
        executorLimit: 1000,
      },
    ],
    workers: [{ id: 'huge', coresFree: MAX_WORKER_CORES, memoryFree: MAX_MEMORY_MB }],
    spreadOut: true,
  });
  assert.equal(limited.executors.length, 1000);
  const ms = performance.now() - started;
  assert.ok(ms < 5_000, `took ${Math.round(ms)} ms`);
});

// Placing on new workers alone ------------------------------------------------------------------

/** The input after `r` is carried out: the placed drivers gone, what they took taken. */
function settle(g: GenInput, r: ScheduleResult): GenInput {
  const free = freeAfter(g.workers, g.drivers, r);
  const apps = new Map(g.apps.map((a) => [a.id, { ...a }]));
  for (const e of r.executors) {
    const a = apps.get(e.appId) as SchedApp & { coresLeft: number; executorCount?: number };
    a.coresLeft -= e.cores;
    a.executorCount = (a.executorCount ?? 0) + 1;
  }
  const placed = new Set(r.drivers.map((d) => d.driverId));
  return {
    ...g,
    drivers: g.drivers.filter((d) => !placed.has(d.id)),
    apps: [...apps.values()].filter((a) => a.coresLeft > 0),
    workers: g.workers.map((w) => ({ ...w, ...free.get(w.id) })),
  };
}

test('placement places all it can: run again at once, it places nothing more', () => {
  fc.assert(
    fc.property(inputArb, (g) => {
      const settled = settle(g, run(g, noShuffle));
      assert.deepEqual(run(settled, noShuffle), { drivers: [], executors: [] });
    }),
    { numRuns: 1000 },
  );
});

test('once placed, a new worker alone gets what a walk of every worker would give (placement.ts looks at new workers only)', () => {
  const newWorker = fc.record({
    coresFree: fc.integer({ min: 0, max: 12 }),
    memoryFree: memory,
  });
  fc.assert(
    fc.property(inputArb, newWorker, (g, added) => {
      const settled = settle(g, run(g, noShuffle));
      const w: SchedWorker = { id: 'new', ...added };
      const everyWorker = run({ ...settled, workers: [...settled.workers, w] }, noShuffle);
      const newOnly = run({ ...settled, workers: [w] }, noShuffle);
      assert.deepEqual(newOnly, everyWorker);
    }),
    { numRuns: 2000 },
  );
});

// waitingReason -------------------------------------------------------------------------------------

test('waitingReason says why an app has no executor, in words a user can act on', () => {
  const total = (w: SchedWorker) => (w.id === 'big' ? 8192 : 2048);
  const app = (over: Partial<SchedApp> = {}): SchedApp => ({
    id: 'app',
    coresLeft: 4,
    memoryPerExecutorMB: 1024,
    ...over,
  });
  const w = (id: string, coresFree: number, memoryFree: number) => ({ id, coresFree, memoryFree });

  assert.match(
    waitingReason(app({ coresLeft: 0 }), [w('a', 4, 2048)], total) ?? '',
    /all the cores it may have \(wick\.cores\.max\)/,
  );
  assert.equal(waitingReason(app(), [], total), 'no worker is alive');
  const tooBig = waitingReason(app({ memoryPerExecutorMB: 4096 }), [w('a', 4, 2048)], total);
  assert.match(tooBig ?? '', /4096 MiB/);
  assert.match(tooBig ?? '', /largest worker has 2048 MiB/);
  assert.match(tooBig ?? '', /wick\.executor\.memory/);
  // A big enough worker exists, but its memory is in use now.
  assert.equal(
    waitingReason(app({ memoryPerExecutorMB: 4096 }), [w('a', 4, 2048), w('big', 4, 1024)], total),
    'no worker has 4096 MiB of memory free now',
  );
  assert.equal(
    waitingReason(app(), [w('a', 0, 2048), w('b', 4, 512)], total),
    'no worker with 1024 MiB free has 1 core free now',
  );
  assert.equal(
    waitingReason(app({ coresPerExecutor: 2 }), [w('a', 1, 2048)], total),
    'no worker with 1024 MiB free has 2 cores free now',
  );
  assert.equal(waitingReason(app(), [w('a', 1, 1024)], total), undefined);
});

test('waitingReason is undefined exactly when schedule() would place an executor', () => {
  fc.assert(
    fc.property(
      workersArb(6),
      appArb.map((a): SchedApp => ({ ...a, id: 'app', executorLimit: undefined })),
      (workers, app) => {
        // An app with fewer cores left than one executor needs is not waiting for a worker.
        fc.pre(app.coresLeft <= 0 || app.coresLeft >= minCoresOf(app));
        const reason = waitingReason(app, workers, (w) => w.memoryFree);
        const r = schedule({ drivers: [], apps: [app], workers, spreadOut: true });
        assert.equal(
          reason === undefined,
          r.executors.length > 0,
          `reason "${reason}" with ${r.executors.length} executors`,
        );
      },
    ),
    { numRuns: 300 },
  );
});
