/**
 * For the `master` benchmark: a realistic scheduling input (waiting apps × alive workers), and
 * Spark's executor scheduling written out naively as the baseline: for every waiting app, filter
 * every worker for the usable ones and sort them by free cores, then run
 * scheduleExecutorsOnWorkers over them (Spark's Master.startExecutorsOnWorkers). Same semantics as
 * backend/master/scheduling.ts (ties in the sort keep the workers' given order), so the two results
 * must be equal; the benchmark checks that they are.
 *
 * One liberty: Spark recomputes `assignedExecutors.sum` inside canLaunchExecutorForApp, which makes
 * each app quadratic in the number of usable workers (10^8 steps per app at 10,000 workers, far too
 * slow to run 1,000 times). The baseline keeps that sum in a counter instead, so it is faster than
 * Spark's literal code: the ratio against it understates the gain, never overstates it.
 */
import type {
  ExecutorAssignment,
  SchedApp,
  ScheduleInput,
  SchedWorker,
} from '../../backend/master/scheduling.js';

/** mulberry32: a small seeded PRNG, so every run schedules the same input. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface ScheduleWorkload {
  apps: SchedApp[];
  workers: SchedWorker[];
  /** Cores free in all, and cores the apps ask for in all. */
  coresFree: number;
  coresWanted: number;
}

const WORKER_CORES = 8;
const WORKER_MEMORY_MB = 32 * 1024;

/**
 * `workers` workers of 8 cores and 32 GiB, a third of them already running something (1 to 8 cores
 * and 4 GiB per core in use); `apps` waiting apps that each want 8 to 64 cores, 1 to 4 GiB per
 * executor, and one executor per worker (no wick.executor.cores, a quarter of them) or executors
 * of 1, 2, 4 or 8 cores.
 */
export function scheduleWorkload(apps: number, workers: number, seed = 42): ScheduleWorkload {
  const random = seeded(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)] as T;
  const ws: SchedWorker[] = [];
  for (let i = 0; i < workers; i++) {
    const used = random() < 1 / 3 ? 1 + Math.floor(random() * WORKER_CORES) : 0;
    ws.push({
      id: `worker-20260101000000-10.0.${Math.floor(i / 250)}.${i % 250}-7078`,
      coresFree: WORKER_CORES - used,
      memoryFree: WORKER_MEMORY_MB - used * 4096,
    });
  }
  const as: SchedApp[] = [];
  for (let i = 0; i < apps; i++) {
    const per = pick([undefined, 1, 2, 4, 8] as const);
    const app: SchedApp = {
      id: `app-20260101000000-${String(i).padStart(4, '0')}`,
      coresLeft: 8 + Math.floor(random() * 57),
      memoryPerExecutorMB: 1024 * (1 + Math.floor(random() * 4)),
      executorCount: 0,
      ...(per === undefined ? {} : { coresPerExecutor: per }),
    };
    as.push(app);
  }
  return {
    apps: as,
    workers: ws,
    coresFree: ws.reduce((s, w) => s + w.coresFree, 0),
    coresWanted: as.reduce((s, a) => s + a.coresLeft, 0),
  };
}

/** Spark's startExecutorsOnWorkers, naively: filter and sort all workers for every app. */
export function naiveScheduleExecutors(
  input: Pick<ScheduleInput, 'apps' | 'workers' | 'spreadOut'>,
): ExecutorAssignment[] {
  const workers = input.workers.map((w) => ({ ...w }));
  const out: ExecutorAssignment[] = [];
  for (const app of input.apps) {
    const minCores = app.coresPerExecutor ?? 1;
    if (app.coresLeft < minCores) continue;
    // Spark: workers.filter(ALIVE).filter(canLaunchExecutor).sortBy(_.coresFree) (most first).
    const usable = workers
      .map((w, i) => ({ w, i }))
      .filter(({ w }) => w.memoryFree >= app.memoryPerExecutorMB && w.coresFree >= minCores)
      .sort((a, b) => b.w.coresFree - a.w.coresFree || a.i - b.i)
      .map(({ w }) => w);
    const assigned = scheduleExecutorsOnWorkers(app, usable, input.spreadOut);
    for (let pos = 0; pos < usable.length; pos++) {
      const cores = assigned[pos] as number;
      if (cores <= 0) continue;
      const w = usable[pos] as SchedWorker;
      const per = app.coresPerExecutor;
      const count = per === undefined ? 1 : Math.floor(cores / per);
      for (let i = 0; i < count; i++) {
        out.push({
          appId: app.id,
          workerId: w.id,
          cores: per ?? cores,
          memory: app.memoryPerExecutorMB,
        });
        w.coresFree -= per ?? cores;
        w.memoryFree -= app.memoryPerExecutorMB;
      }
    }
  }
  return out;
}

/** Spark's scheduleExecutorsOnWorkers, with the executor count kept in a counter (see above). */
function scheduleExecutorsOnWorkers(
  app: SchedApp,
  usable: readonly SchedWorker[],
  spreadOut: boolean,
): number[] {
  const minCores = app.coresPerExecutor ?? 1;
  const oneExecutorPerWorker = app.coresPerExecutor === undefined;
  const mem = app.memoryPerExecutorMB;
  const limit = app.executorLimit ?? Number.POSITIVE_INFINITY;
  const assignedCores = new Array<number>(usable.length).fill(0);
  const assignedExecutors = new Array<number>(usable.length).fill(0);
  let executorsAssigned = 0;
  let coresToAssign = Math.min(
    app.coresLeft,
    usable.reduce((s, w) => s + w.coresFree, 0),
  );

  const canLaunch = (pos: number): boolean => {
    const w = usable[pos] as SchedWorker;
    const keepScheduling = coresToAssign >= minCores;
    const enoughCores = w.coresFree - (assignedCores[pos] as number) >= minCores;
    const launchingNew = !oneExecutorPerWorker || assignedExecutors[pos] === 0;
    if (launchingNew) {
      const enoughMemory = w.memoryFree - (assignedExecutors[pos] as number) * mem >= mem;
      const underLimit = executorsAssigned + (app.executorCount ?? 0) < limit;
      return keepScheduling && enoughCores && enoughMemory && underLimit;
    }
    return keepScheduling && enoughCores;
  };

  let free = usable.map((_, i) => i).filter(canLaunch);
  while (free.length > 0) {
    for (const pos of free) {
      let keepScheduling = true;
      while (keepScheduling && canLaunch(pos)) {
        coresToAssign -= minCores;
        assignedCores[pos] = (assignedCores[pos] as number) + minCores;
        if (oneExecutorPerWorker) {
          if (assignedExecutors[pos] === 0) executorsAssigned++;
          assignedExecutors[pos] = 1;
        } else {
          assignedExecutors[pos] = (assignedExecutors[pos] as number) + 1;
          executorsAssigned++;
        }
        if (spreadOut) keepScheduling = false;
      }
    }
    free = free.filter(canLaunch);
  }
  return assignedCores;
}

/** The first difference between two assignment lists, or undefined when they are equal. */
export function firstDifference(
  a: readonly ExecutorAssignment[],
  b: readonly ExecutorAssignment[],
): string | undefined {
  const n = Math.max(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a[i];
    const y = b[i];
    if (
      !x ||
      !y ||
      x.appId !== y.appId ||
      x.workerId !== y.workerId ||
      x.cores !== y.cores ||
      x.memory !== y.memory
    ) {
      return `assignment ${i}: ${JSON.stringify(x)} vs ${JSON.stringify(y)} (${a.length} vs ${b.length} in all)`;
    }
  }
  return undefined;
}
