/**
 * The Master's scheduling, as a pure function of (waiting drivers, waiting apps, alive workers) to
 * assignments, with Spark's semantics (Master.schedule, startExecutorsOnWorkers,
 * scheduleExecutorsOnWorkers):
 *
 * - Drivers first, each on the next worker, round-robin over the shuffled alive workers, that has
 *   the driver's memory and cores free.
 * - Then executors, apps in FIFO order. Usable workers have an executor's memory and cores free and
 *   are taken by free cores, most first. Spread-out gives each usable worker one executor's worth
 *   of cores per round; packing fills a worker before moving on. Without cores per executor an app
 *   gets one executor per worker that takes every core it is given there.
 *
 * Spark filters and sorts every worker for every app; at 1,000 apps × 10,000 workers that is
 * seconds. Here the workers are put in order once and kept in order as their free cores drop (in
 * buckets by free cores, see BucketOrder), each app stops scanning the moment it can take no more,
 * and the loop ends when no cores are free at all. The assignments are the same.
 */

import type { ResourceRequirement } from '../protocol/resources.js';
import {
  executorsAllowed,
  resourcesWaitingReason,
  takeForExecutors,
} from './resources/requirements.js';

export interface SchedWorker {
  readonly id: string;
  coresFree: number;
  memoryFree: number;
  /** Free addresses of its custom resources, by name (none: it has none). */
  resourcesFree?: Record<string, number>;
}

export interface SchedApp {
  readonly id: string;
  /** Cores the app may still be granted (max cores − cores granted). */
  readonly coresLeft: number;
  readonly memoryPerExecutorMB: number;
  readonly coresPerExecutor?: number;
  /** Executors the app has now, and the most it may have (Spark's executorLimit). */
  readonly executorCount?: number;
  readonly executorLimit?: number;
  /** Each executor's custom resources (wick.executor.resource.*); a worker needs them free. */
  readonly resourceReqsPerExecutor?: readonly ResourceRequirement[];
}

export interface SchedDriver {
  readonly id: string;
  readonly mem: number;
  readonly cores: number;
}

export interface ExecutorAssignment {
  appId: string;
  workerId: string;
  cores: number;
  memory: number;
}

export interface DriverAssignment {
  driverId: string;
  workerId: string;
}

export interface ScheduleInput {
  drivers: readonly SchedDriver[];
  apps: readonly SchedApp[];
  /** Alive workers only. Not modified. */
  workers: readonly SchedWorker[];
  spreadOut: boolean;
  /** For the drivers' shuffle; inject a seeded one in tests. */
  random?: () => number;
}

export interface ScheduleResult {
  drivers: DriverAssignment[];
  executors: ExecutorAssignment[];
}

export function schedule(input: ScheduleInput): ScheduleResult {
  const workers = input.workers.map((w) => ({
    id: w.id,
    coresFree: w.coresFree,
    memoryFree: w.memoryFree,
    ...(w.resourcesFree ? { resourcesFree: { ...w.resourcesFree } } : {}),
  }));
  const drivers = placeDrivers(input.drivers, workers, input.random ?? Math.random);
  const executors = placeExecutors(input.apps, workers, input.spreadOut);
  return { drivers, executors };
}

function placeDrivers(
  drivers: readonly SchedDriver[],
  workers: SchedWorker[],
  random: () => number,
): DriverAssignment[] {
  const out: DriverAssignment[] = [];
  if (drivers.length === 0 || workers.length === 0) return out;
  const shuffled = shuffle(workers, random);
  const n = shuffled.length;
  let curPos = 0;
  for (const driver of drivers) {
    for (let visited = 0; visited < n; visited++) {
      const w = shuffled[curPos] as SchedWorker;
      curPos = (curPos + 1) % n;
      if (w.memoryFree >= driver.mem && w.coresFree >= driver.cores) {
        w.memoryFree -= driver.mem;
        w.coresFree -= driver.cores;
        out.push({ driverId: driver.id, workerId: w.id });
        break;
      }
    }
  }
  return out;
}

function placeExecutors(
  apps: readonly SchedApp[],
  workers: SchedWorker[],
  spreadOut: boolean,
): ExecutorAssignment[] {
  const out: ExecutorAssignment[] = [];
  // Every executor needs a worker with its memory and cores free. Free memory and cores only drop
  // while apps are placed, so an app asking for more than the most any worker has now is passed
  // over without a walk of the workers: 1,000 apps waiting for bigger workers made every worker's
  // registration walk them all for each app (10,000 workers did not register within 60 s).
  let totalFree = 0;
  let mostMemory = Number.NEGATIVE_INFINITY;
  let mostCores = 0;
  for (const w of workers) {
    if (w.coresFree <= 0) continue;
    totalFree += w.coresFree;
    if (w.memoryFree > mostMemory) mostMemory = w.memoryFree;
    if (w.coresFree > mostCores) mostCores = w.coresFree;
  }
  const mayFit = (app: SchedApp) =>
    app.coresLeft > 0 &&
    app.memoryPerExecutorMB <= mostMemory &&
    (app.coresPerExecutor ?? 1) <= mostCores;
  if (!apps.some(mayFit)) return out;
  const order = freeCoresOrder(workers, apps);
  for (const app of apps) {
    if (totalFree === 0) break;
    if (!mayFit(app)) continue;
    const assigned = assignCores(app, order, spreadOut);
    if (assigned.size === 0) continue;
    const per = app.coresPerExecutor;
    for (const [w, cores] of assigned) {
      const count = per === undefined ? 1 : Math.floor(cores / per);
      for (let i = 0; i < count; i++) {
        out.push({
          appId: app.id,
          workerId: w.id,
          cores: per ?? cores,
          memory: app.memoryPerExecutorMB,
        });
      }
      const before = w.coresFree;
      w.coresFree -= cores;
      w.memoryFree -= count * app.memoryPerExecutorMB;
      takeForExecutors(w.resourcesFree, app.resourceReqsPerExecutor, count);
      totalFree -= cores;
      order.moved(w, before);
    }
  }
  return out;
}

/**
 * scheduleExecutorsOnWorkers for one app: cores per worker, over workers sorted by free cores.
 *
 * Spark hands out one executor's worth of cores per loop turn, so a worker offering 10^9 cores
 * took 10^9 turns (the master froze for minutes). The same assignments are computed here in
 * steps that depend on the number of workers, not of cores: each worker can take some number of
 * grants (an executor's worth each) by its cores and memory, the app some number in all by its
 * cores left and executor limit; packing takes what each worker can, in order, and spreading out
 * gives every worker the same number of rounds (water-filling: the most rounds R that the budget
 * covers), then one more grant each to the first workers that can take more, as the partial last
 * round would.
 */
function assignCores(
  app: SchedApp,
  order: FreeCoresOrder,
  spreadOut: boolean,
): Map<SchedWorker, number> {
  const per = app.coresPerExecutor;
  const minCores = per ?? 1;
  const mem = app.memoryPerExecutorMB;
  const newExecutors = (app.executorLimit ?? Number.POSITIVE_INFINITY) - (app.executorCount ?? 0);
  // Grants of minCores each that the app's cores left allow.
  const coreGrants = Math.floor(app.coresLeft / minCores);
  const cores = new Map<SchedWorker, number>();
  if (coreGrants < 1 || newExecutors < 1) return cores;

  // With cores per executor every grant is a new executor; without, a worker's first is.
  const budget = per === undefined ? coreGrants : Math.min(coreGrants, newExecutors);
  const maxWorkers = per === undefined ? Math.min(newExecutors, coreGrants) : budget;
  // Spark's canLaunchExecutor: its resources free too (one executor's worth per executor).
  const reqs = app.resourceReqsPerExecutor;
  const capacity = (w: SchedWorker): number => {
    const byCores = Math.floor(w.coresFree / minCores);
    const byResources = executorsAllowed(w.resourcesFree, reqs);
    const fits = w.memoryFree >= mem && byResources >= 1;
    if (per === undefined) return fits ? byCores : 0;
    if (mem <= 0) return fits ? Math.min(byCores, byResources) : 0;
    return Math.min(byCores, Math.floor(w.memoryFree / mem), byResources);
  };

  // The usable workers in order, as many as can get a grant; each with what it can take.
  const usable: SchedWorker[] = [];
  const caps: number[] = [];
  let left = budget;
  order.visitWhile((w) => {
    if (w.coresFree < minCores) return false;
    const cap = capacity(w);
    if (cap < 1) return true;
    usable.push(w);
    if (!spreadOut) {
      const take = Math.min(cap, left);
      caps.push(take);
      left -= take;
      return left > 0 && usable.length < maxWorkers;
    }
    caps.push(cap);
    return usable.length < maxWorkers;
  });

  const grants = spreadOut ? waterFill(caps, budget) : caps;
  grants.forEach((g, i) => {
    if (g > 0) cores.set(usable[i] as SchedWorker, g * minCores);
  });
  return cores;
}

/**
 * Round-robin over workers that can take `caps[i]` grants each, `budget` grants in all: every
 * worker gets min(cap, R) for the most full rounds R the budget covers, and the rest go one each
 * to the first workers in order that can take more.
 */
export function waterFill(caps: readonly number[], budget: number): number[] {
  let total = 0;
  let most = 0;
  for (const c of caps) {
    total += c;
    if (c > most) most = c;
  }
  if (total <= budget) return caps.slice();
  const given = (r: number) => {
    let sum = 0;
    for (const c of caps) sum += Math.min(c, r);
    return sum;
  };
  // The largest R with given(R) ≤ budget: given(0) = 0 ≤ budget, given(most) = total > budget.
  let lo = 0;
  let hi = most;
  while (hi - lo > 1) {
    const mid = lo + Math.floor((hi - lo) / 2);
    if (given(mid) <= budget) lo = mid;
    else hi = mid;
  }
  let extra = budget - given(lo);
  return caps.map((c) => {
    if (c <= lo) return c;
    if (extra > 0) {
      extra--;
      return lo + 1;
    }
    return lo;
  });
}

/**
 * The workers with free cores in the order Spark sorts them for every app: most free cores
 * first and, among equals, in the given order (a stable sort). Kept up to date as workers' free
 * cores drop, instead of sorting afresh for every app.
 */
interface FreeCoresOrder {
  /** Visits the workers in order while `visit` returns true. */
  visitWhile(visit: (w: SchedWorker) => boolean): void;
  /** A worker's free cores dropped from `before` to what it has now. */
  moved(w: SchedWorker, before: number): void;
}

/** Beyond this many free cores on a worker, buckets by free cores would be too many. */
const MAX_BUCKETED_CORES = 256;

function freeCoresOrder(
  workers: readonly SchedWorker[],
  apps: readonly SchedApp[],
): FreeCoresOrder {
  const small = (n: number) => Number.isInteger(n) && n <= MAX_BUCKETED_CORES;
  const bucketable =
    workers.every((w) => w.coresFree <= 0 || small(w.coresFree)) &&
    apps.every(
      (a) =>
        (a.coresPerExecutor === undefined || Number.isInteger(a.coresPerExecutor)) &&
        Number.isInteger(a.coresLeft),
    );
  return bucketable ? new BucketOrder(workers) : new SortedOrder(workers);
}

/**
 * One bit set per number of free cores (at most 257 of them), each over the workers' positions in
 * the given order: moving a worker is two bit flips, and visiting in order is a scan of words.
 */
class BucketOrder implements FreeCoresOrder {
  private readonly buckets: (Uint32Array | undefined)[] = [];
  /** Workers in each bucket, and the first word of each that may have a bit set. */
  private readonly counts: number[] = [];
  private readonly firstWord: number[] = [];
  private readonly rank = new Map<SchedWorker, number>();
  private readonly words: number;
  private top = 0;

  constructor(private readonly workers: readonly SchedWorker[]) {
    this.words = (workers.length + 31) >>> 5;
    for (let r = 0; r < workers.length; r++) {
      const w = workers[r] as SchedWorker;
      this.rank.set(w, r);
      if (w.coresFree > 0) this.add(w.coresFree, r);
    }
  }

  visitWhile(visit: (w: SchedWorker) => boolean): void {
    for (let key = this.top; key > 0; key--) {
      const bits = this.buckets[key];
      if (!bits || this.counts[key] === 0) continue;
      let i = this.firstWord[key] as number;
      while (i < this.words && bits[i] === 0) i++;
      this.firstWord[key] = i;
      for (; i < this.words; i++) {
        let word = bits[i] as number;
        while (word !== 0) {
          const low = word & -word;
          const r = (i << 5) + (31 - Math.clz32(low));
          word ^= low;
          if (!visit(this.workers[r] as SchedWorker)) return;
        }
      }
    }
  }

  moved(w: SchedWorker, before: number): void {
    const r = this.rank.get(w) as number;
    if (before > 0) {
      const bits = this.buckets[before] as Uint32Array;
      bits[r >>> 5] = (bits[r >>> 5] as number) & ~(1 << (r & 31));
      this.counts[before] = (this.counts[before] as number) - 1;
    }
    if (w.coresFree > 0) this.add(w.coresFree, r);
  }

  private add(key: number, r: number): void {
    let bits = this.buckets[key];
    if (!bits) {
      bits = new Uint32Array(this.words);
      this.buckets[key] = bits;
      this.counts[key] = 0;
      this.firstWord[key] = this.words;
    }
    bits[r >>> 5] = (bits[r >>> 5] as number) | (1 << (r & 31));
    this.counts[key] = (this.counts[key] as number) + 1;
    if (r >>> 5 < (this.firstWord[key] as number)) this.firstWord[key] = r >>> 5;
    if (key > this.top) this.top = key;
  }
}

/** The general case (free cores beyond MAX_BUCKETED_CORES, or not whole): one sorted array. */
class SortedOrder implements FreeCoresOrder {
  private readonly sorted: SchedWorker[];
  private readonly rank: Map<SchedWorker, number>;

  constructor(workers: readonly SchedWorker[]) {
    // Most free cores first; ties keep the workers' given order (a stable sort).
    this.sorted = workers.filter((w) => w.coresFree > 0).sort((a, b) => b.coresFree - a.coresFree);
    this.rank = new Map(workers.map((w, i) => [w, i]));
  }

  visitWhile(visit: (w: SchedWorker) => boolean): void {
    for (const w of this.sorted) if (!visit(w)) return;
  }

  /**
   * Moves the worker to its place: after every worker with more free cores, or as many and an
   * earlier rank, as a stable sort of the given workers would put it (Spark sorts afresh for every
   * app, so a worker that drops into a tie goes by its rank).
   */
  moved(w: SchedWorker): void {
    const sorted = this.sorted;
    const from = sorted.indexOf(w);
    if (from < 0) return;
    sorted.splice(from, 1);
    if (w.coresFree <= 0) return;
    const r = this.rank.get(w) as number;
    let lo = from;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const x = sorted[mid] as SchedWorker;
      if (
        x.coresFree > w.coresFree ||
        (x.coresFree === w.coresFree && (this.rank.get(x) as number) < r)
      )
        lo = mid + 1;
      else hi = mid;
    }
    sorted.splice(lo, 0, w);
  }
}

function shuffle<T>(items: readonly T[], random: () => number): T[] {
  const a = items.slice();
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [a[i], a[j]] = [a[j] as T, a[i] as T];
  }
  return a;
}

/** Why a waiting app has no executor yet, in words a user can act on. */
export function waitingReason(
  app: SchedApp,
  workers: readonly SchedWorker[],
  totalMemory: (w: SchedWorker) => number,
  totalResources?: (w: SchedWorker) => Readonly<Record<string, number>> | undefined,
): string | undefined {
  return waitingReasons(workers, totalMemory, totalResources)(app);
}

/**
 * waitingReason for many apps over the same workers: what it needs of the workers (the largest
 * one's memory, the most free memory, the most free cores among those with some memory free) is
 * found once, not walked again for every app.
 */
export function waitingReasons(
  workers: readonly SchedWorker[],
  totalMemory: (w: SchedWorker) => number,
  totalResources?: (w: SchedWorker) => Readonly<Record<string, number>> | undefined,
): (app: SchedApp) => string | undefined {
  let biggest: number | undefined;
  let byMemory: { memoryFree: number[]; mostCores: number[] } | undefined;
  /** The most free cores of a worker with at least `mem` free (-1: no such worker). */
  const mostCoresWith = (mem: number): number => {
    if (!byMemory) {
      const sorted = [...workers].sort((a, b) => b.memoryFree - a.memoryFree);
      let most = Number.NEGATIVE_INFINITY;
      byMemory = {
        memoryFree: sorted.map((w) => w.memoryFree),
        mostCores: sorted.map((w) => {
          most = Math.max(most, w.coresFree);
          return most;
        }),
      };
    }
    // The last worker, in order of free memory, that has `mem` free.
    const { memoryFree, mostCores } = byMemory;
    let lo = 0;
    let hi = memoryFree.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((memoryFree[mid] as number) >= mem) lo = mid + 1;
      else hi = mid;
    }
    return lo === 0 ? -1 : (mostCores[lo - 1] as number);
  };
  return (app) => {
    if (app.coresLeft <= 0) return 'it has all the cores it may have (wick.cores.max)';
    if (workers.length === 0) return 'no worker is alive';
    const forResources = resourcesWaitingReason(
      app.resourceReqsPerExecutor,
      workers,
      (w) => totalResources?.(w),
      (w) => w.resourcesFree,
    );
    if (forResources !== undefined) return forResources;
    const minCores = app.coresPerExecutor ?? 1;
    const mem = app.memoryPerExecutorMB;
    if (biggest === undefined) {
      // A loop, not Math.max(...): spreading 100,000 workers as arguments overflows the stack.
      biggest = Number.NEGATIVE_INFINITY;
      for (const w of workers) biggest = Math.max(biggest, totalMemory(w));
    }
    if (biggest < mem) {
      return `each executor asks for ${mem} MiB but the largest worker has ${biggest} MiB (lower wick.executor.memory or add a bigger worker)`;
    }
    const cores = mostCoresWith(mem);
    if (cores < 0) return `no worker has ${mem} MiB of memory free now`;
    if (cores < minCores) {
      return `no worker with ${mem} MiB free has ${minCores} core${minCores > 1 ? 's' : ''} free now`;
    }
    return undefined;
  };
}
