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

export interface SchedWorker {
  readonly id: string;
  coresFree: number;
  memoryFree: number;
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
  const order = freeCoresOrder(workers, apps);
  let totalFree = 0;
  for (const w of workers) if (w.coresFree > 0) totalFree += w.coresFree;
  for (const app of apps) {
    if (totalFree === 0) break;
    if (app.coresLeft <= 0) continue;
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
      totalFree -= cores;
      order.moved(w, before);
    }
  }
  return out;
}

/** scheduleExecutorsOnWorkers for one app: cores per worker, over workers sorted by free cores. */
function assignCores(
  app: SchedApp,
  order: FreeCoresOrder,
  spreadOut: boolean,
): Map<SchedWorker, number> {
  const minCores = app.coresPerExecutor ?? 1;
  const oneExecutorPerWorker = app.coresPerExecutor === undefined;
  const mem = app.memoryPerExecutorMB;
  const limit = app.executorLimit ?? Number.POSITIVE_INFINITY;
  let executorsNow = app.executorCount ?? 0;
  let coresToAssign = app.coresLeft;
  const cores = new Map<SchedWorker, number>();
  const executors = new Map<SchedWorker, number>();

  const canLaunch = (w: SchedWorker): boolean => {
    if (coresToAssign < minCores) return false;
    const given = cores.get(w) ?? 0;
    if (w.coresFree - given < minCores) return false;
    const execs = executors.get(w) ?? 0;
    const launchingNew = !oneExecutorPerWorker || execs === 0;
    if (!launchingNew) return true;
    return w.memoryFree - execs * mem >= mem && executorsNow < limit;
  };
  const give = (w: SchedWorker): void => {
    coresToAssign -= minCores;
    cores.set(w, (cores.get(w) ?? 0) + minCores);
    const execs = executors.get(w) ?? 0;
    if (!oneExecutorPerWorker || execs === 0) executorsNow++;
    executors.set(w, oneExecutorPerWorker ? 1 : execs + 1);
  };

  // The first round walks the workers in order and stops at the first without enough free cores:
  // every one after it has fewer.
  let free: SchedWorker[] = [];
  order.visitWhile((w) => {
    if (coresToAssign < minCores || w.coresFree < minCores) return false;
    if (!canLaunch(w)) return true;
    do give(w);
    while (!spreadOut && canLaunch(w));
    free.push(w);
    return true;
  });
  while (free.length > 0 && coresToAssign >= minCores && executorsNow <= limit) {
    free = free.filter(canLaunch);
    for (const w of free) {
      if (coresToAssign < minCores) break;
      if (!canLaunch(w)) continue;
      do give(w);
      while (!spreadOut && canLaunch(w));
    }
  }
  return cores;
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
): string | undefined {
  if (app.coresLeft <= 0) return 'it has all the cores it may have (wick.cores.max)';
  if (workers.length === 0) return 'no worker is alive';
  const minCores = app.coresPerExecutor ?? 1;
  const mem = app.memoryPerExecutorMB;
  const biggest = Math.max(...workers.map(totalMemory));
  if (biggest < mem) {
    return `each executor asks for ${mem} MiB but the largest worker has ${biggest} MiB (lower wick.executor.memory or add a bigger worker)`;
  }
  const withMemory = workers.filter((w) => w.memoryFree >= mem);
  if (withMemory.length === 0) return `no worker has ${mem} MiB of memory free now`;
  if (!withMemory.some((w) => w.coresFree >= minCores)) {
    return `no worker with ${mem} MiB free has ${minCores} core${minCores > 1 ? 's' : ''} free now`;
  }
  return undefined;
}
