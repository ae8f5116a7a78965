import { MAX_WORKERS } from '../protocol/bounds.js';
import type {
  AppFailure,
  ApplicationState,
  DriverState,
  ExecutorState,
  WorkerState,
} from '../protocol/common.js';
import type { ResourceAddresses } from '../protocol/resources.js';
import {
  type AppProgress,
  type AppSummary,
  type DriverSummary,
  STATE_TABLE_ORDER,
  STATE_TABLES,
  type StatePosition,
  type StateTable,
  type WorkerSummary,
} from '../protocol/state.js';
import type { PeerConnection, RpcEndpointRef } from '../rpc/index.js';
import { latestRun } from '../shared/driverRuns.js';
import { getLogger } from '../util/log.js';
import type { ApplicationInfo } from './ApplicationInfo.js';
import type { DriverInfo } from './DriverInfo.js';
import type { ExecutorDesc } from './ExecutorDesc.js';
import { appId, driverId } from './ids.js';
import type { WorkerInfo } from './WorkerInfo.js';

const log = getLogger('Master');

/**
 * Told of every change of what the tables show: an entry added or changed (its summary is read
 * when the change goes out), or forgotten. The master's is its StateBroadcaster, so that its
 * subscribers see every change without anyone pushing by hand.
 */
export interface ClusterListener {
  worker(worker: WorkerInfo): void;
  /** Only the worker's last heartbeat changed: a change that may wait a moment to go out. */
  workerHeartbeat(worker: WorkerInfo): void;
  app(app: ApplicationInfo): void;
  driver(driver: DriverInfo): void;
  workerRemoved(id: string): void;
  appRemoved(id: string): void;
  driverRemoved(id: string): void;
}

export interface ClusterStateOptions {
  /** Completed applications kept (wick.deploy.retainedApplications). */
  retainedApplications: number;
  /** Completed drivers kept (wick.deploy.retainedDrivers). */
  retainedDrivers: number;
  listener: ClusterListener;
}

export interface StatePage {
  summaries: ClusterSummaries;
  next?: StatePosition;
}

/** The entries of every table, as a snapshot lists them. */
export interface ClusterSummaries {
  workers: WorkerSummary[];
  activeApps: AppSummary[];
  completedApps: AppSummary[];
  activeDrivers: DriverSummary[];
  completedDrivers: DriverSummary[];
}

/**
 * The Master's tables of workers, applications and drivers, and the ids it gives out. Spark keeps
 * these as a dozen mutable fields of Master; here they are private, so that the invariants between
 * them hold in one place: a registered worker is in the id and address indexes and a DEAD one only
 * in the list of known workers; an active application is in the id and address indexes, and in the
 * FIFO until it finishes; a finished application or driver is kept among the completed ones, the
 * oldest tenth dropped when full (as Spark does). It does no I/O: messages, persistence and
 * scheduling are the operations' business (operations/).
 *
 * It is also the only writer of what a summary shows (an entity's state, its executors, its
 * worker, its times): each method that changes it tells the listener, so that no change can
 * reach the tables without reaching the subscribers (test/master/ClusterState.test.ts calls
 * every method and fails on one that changes a summary silently).
 */
export class ClusterState {
  /** Every known worker, DEAD ones too until forgotten. */
  private readonly workers = new Map<string, WorkerInfo>();
  /** Registered (not DEAD) workers by id and by their RpcEnv address. */
  private readonly idToWorker = new Map<string, WorkerInfo>();
  private readonly addressToWorker = new Map<string, WorkerInfo>();
  private readonly idToApp = new Map<string, ApplicationInfo>();
  private readonly addressToApp = new Map<string, ApplicationInfo>();
  /** Active applications in registration order: the FIFO the scheduler serves. */
  private readonly waiting: ApplicationInfo[] = [];
  private readonly completedApps: ApplicationInfo[] = [];
  private readonly drivers = new Map<string, DriverInfo>();
  private readonly waitingDriverList: DriverInfo[] = [];
  private readonly completedDrivers: DriverInfo[] = [];
  private nextAppNumber = 0;
  private nextDriverNumber = 0;
  /** DEAD workers still listed, by host:port: what a worker starting there replaces. */
  private readonly deadAt = new Map<string, Set<WorkerInfo>>();
  /**
   * Each entry's place in its table, counting up as entries are added: a page of the state ends
   * at one, and the next page starts after it, wherever entries came and went meanwhile.
   */
  private readonly ranks = new WeakMap<object, number>();
  private lastRank = 0;
  /**
   * What placement (placement.ts) has to look at again since it last placed all it could: every
   * worker, after a change that may let an app or a driver fit where it did not; or, when nothing
   * else changed, only the workers added since, for only they can take anything. Registering
   * 10,000 workers with applications waiting then no longer walks every worker for each one.
   */
  private placeAll = true;
  private placeAdded: WorkerInfo[] = [];
  /** The listener, and placement told that it has every worker to look at again. */
  private readonly changed: ClusterListener;

  constructor(private readonly options: ClusterStateOptions) {
    const { listener } = options;
    const all = <A extends unknown[]>(tell: (...args: A) => void) => {
      return (...args: A) => {
        this.placeAll = true;
        this.placeAdded = [];
        tell.apply(listener, args);
      };
    };
    this.changed = {
      worker: all(listener.worker),
      workerHeartbeat: (w) => listener.workerHeartbeat(w),
      app: all(listener.app),
      driver: all(listener.driver),
      workerRemoved: all(listener.workerRemoved),
      appRemoved: all(listener.appRemoved),
      driverRemoved: all(listener.driverRemoved),
    };
  }

  // Placement

  /** What placement has to look at again: every worker, or only these new ones. */
  placementChanges(): { readonly everything: boolean; readonly added: readonly WorkerInfo[] } {
    return { everything: this.placeAll, added: this.placeAdded };
  }

  /** Something placement reads changed outside the tables (an application's executor limit). */
  placementMayChange(): void {
    this.placeAll = true;
    this.placeAdded = [];
  }

  /** Placement has placed all it could: from now on only new changes count. */
  placementSettled(): void {
    this.placeAll = false;
    this.placeAdded = [];
  }

  // Workers

  /** A registered (not DEAD) worker. */
  workerById(id: string): WorkerInfo | undefined {
    return this.idToWorker.get(id);
  }

  /** The registered worker whose RpcEnv is at this address. */
  workerByAddress(address: string): WorkerInfo | undefined {
    return this.addressToWorker.get(address);
  }

  /** Whether this worker is known at all, DEAD or not. */
  knowsWorker(id: string): boolean {
    return this.workers.has(id);
  }

  /** Every known worker, DEAD ones too (a copy: callers may remove while they walk it). */
  allWorkers(): WorkerInfo[] {
    return [...this.workers.values()];
  }

  /** The registered workers (a live view: do not remove while walking it). */
  registeredWorkers(): IterableIterator<WorkerInfo> {
    return this.idToWorker.values();
  }

  /**
   * Adds a registered worker; its id and address must be free (see workerByAddress). UNKNOWN: one
   * recovered from the persisted state, until it answers the master change.
   */
  addWorker(worker: WorkerInfo, state: Extract<WorkerState, 'ALIVE' | 'UNKNOWN'> = 'ALIVE'): void {
    const address = worker.endpoint.address;
    const taken = this.idToWorker.get(worker.id) ?? this.addressToWorker.get(address);
    if (taken) {
      throw new Error(
        `Worker ${worker.id} at ${address}: ${taken.id} at ${taken.endpoint.address} is registered already (remove it first)`,
      );
    }
    const dead = this.workers.get(worker.id);
    if (dead) this.notDead(dead);
    // Deleted first, so that the table stays in the order of the entries' ranks.
    this.workers.delete(worker.id);
    this.workers.set(worker.id, worker);
    this.ranks.set(worker, ++this.lastRank);
    this.idToWorker.set(worker.id, worker);
    this.addressToWorker.set(address, worker);
    worker.state = state;
    if (state === 'ALIVE' && !dead) {
      if (!this.placeAll) this.placeAdded.push(worker);
      this.options.listener.worker(worker);
    } else {
      this.changed.worker(worker);
    }
  }

  /** A heartbeat from a registered worker: the pages' "Last heartbeat" is live. */
  workerHeartbeat(worker: WorkerInfo, now: number): void {
    worker.lastHeartbeat = now;
    this.options.listener.workerHeartbeat(worker);
  }

  /**
   * A worker answered a recovering master: ALIVE again, over `connection` (the one it answered
   * on, from then on its own) if given.
   */
  workerReregistered(
    worker: WorkerInfo,
    now: number,
    over?: { connection: PeerConnection; endpoint: RpcEndpointRef },
  ): void {
    if (over) {
      worker.connection = over.connection;
      worker.endpoint = over.endpoint;
    }
    worker.state = 'ALIVE';
    worker.lastHeartbeat = now;
    this.changed.worker(worker);
  }

  /**
   * Whether one more worker may register: known workers (DEAD ones too) stay within
   * MAX_WORKERS, the oldest DEAD one forgotten to make room. A reason when it may not.
   */
  roomForWorker(): string | undefined {
    if (this.workers.size < MAX_WORKERS) return undefined;
    for (const w of this.workers.values()) {
      if (this.idToWorker.get(w.id) !== w) {
        this.forgetWorker(w);
        return undefined;
      }
    }
    return `The master has ${this.workers.size} workers registered, the most it takes (${MAX_WORKERS})`;
  }

  /**
   * A registered worker decommissions: placement passes it over (it takes ALIVE workers only),
   * and it is listed DECOMMISSIONED until it leaves, and after.
   */
  decommissionWorker(worker: WorkerInfo): void {
    if (worker.state === 'DECOMMISSIONED') return;
    worker.state = 'DECOMMISSIONED';
    this.changed.worker(worker);
  }

  /**
   * Marks a worker DEAD: no longer registered, still listed until forgotten. A decommissioned
   * one stays DECOMMISSIONED (Spark's removeWorker makes it DEAD): it left as it was asked to,
   * and an operator reading the list should not take it for a lost one.
   */
  markWorkerDead(worker: WorkerInfo): void {
    const was = worker.state;
    if (was !== 'DECOMMISSIONED') worker.state = 'DEAD';
    if (this.idToWorker.get(worker.id) === worker) this.idToWorker.delete(worker.id);
    if (this.addressToWorker.get(worker.endpoint.address) === worker) {
      this.addressToWorker.delete(worker.endpoint.address);
    }
    if (this.workers.get(worker.id) === worker) {
      const at = this.deadAt.get(worker.hostPort) ?? new Set();
      at.add(worker);
      this.deadAt.set(worker.hostPort, at);
    }
    if (was !== worker.state) this.changed.worker(worker);
  }

  /** Forgets a DEAD worker (wick.dead.worker.persistence passed, or a new one at its host:port). */
  forgetWorker(worker: WorkerInfo): void {
    if (this.workers.get(worker.id) !== worker) return;
    this.markWorkerDead(worker);
    this.notDead(worker);
    this.workers.delete(worker.id);
    this.changed.workerRemoved(worker.id);
  }

  /**
   * Forgets the DEAD workers at host:port: a worker starting there replaces them. By an index,
   * not a walk of every worker: each of 20,000 registrations walked them all.
   */
  forgetDeadWorkersAt(host: string, port: number): void {
    const at = this.deadAt.get(`${host}:${port}`);
    if (!at) return;
    for (const w of [...at]) this.forgetWorker(w);
  }

  private notDead(worker: WorkerInfo): void {
    const at = this.deadAt.get(worker.hostPort);
    at?.delete(worker);
    if (at?.size === 0) this.deadAt.delete(worker.hostPort);
  }

  // Applications

  /** The next application id, `app-<yyyyMMddHHmmss of now>-<number>`. */
  nextAppId(now: number): string {
    return appId(now, this.nextAppNumber++);
  }

  /** Keeps the ids given later from colliding with a recovered application's. */
  reserveAppId(id: string): void {
    this.nextAppNumber = Math.max(this.nextAppNumber, numberOf(id) + 1);
  }

  /** An active application. */
  appById(id: string): ApplicationInfo | undefined {
    return this.idToApp.get(id);
  }

  /** The active application whose driver's RpcEnv is at this address. */
  appByAddress(address: string): ApplicationInfo | undefined {
    return this.addressToApp.get(address);
  }

  /** The active applications (a copy: callers may finish some while they walk it). */
  activeApps(): ApplicationInfo[] {
    return [...this.idToApp.values()];
  }

  /** Active applications in registration order, the FIFO the scheduler serves. */
  waitingApps(): readonly ApplicationInfo[] {
    return this.waiting;
  }

  /**
   * Adds an active application; false if its driver's address has one already. UNKNOWN: one
   * recovered from the persisted state, until its driver acknowledges the master change.
   */
  addApp(
    app: ApplicationInfo,
    state: Extract<ApplicationState, 'WAITING' | 'UNKNOWN'> = 'WAITING',
  ): boolean {
    const address = app.driver.address;
    if (this.addressToApp.has(address) || this.idToApp.has(app.id)) return false;
    this.idToApp.set(app.id, app);
    this.ranks.set(app, ++this.lastRank);
    this.addressToApp.set(address, app);
    this.waiting.push(app);
    app.state = state;
    this.changed.app(app);
    return true;
  }

  /**
   * A recovered application's driver acknowledged the master change: WAITING again, its driver
   * over `connection` (the one it acknowledged on) if given.
   */
  appReregistered(
    app: ApplicationInfo,
    over?: { connection: PeerConnection; driver: RpcEndpointRef },
  ): void {
    if (over) {
      app.connection = over.connection;
      app.driver = over.driver;
    }
    app.state = 'WAITING';
    this.changed.app(app);
  }

  /** An active application's state (RUNNING once it has executors). */
  setAppState(app: ApplicationInfo, state: Extract<ApplicationState, 'WAITING' | 'RUNNING'>): void {
    if (app.state === state) return;
    app.state = state;
    this.changed.app(app);
  }

  /** Why a WAITING application has no executors yet (placement.ts); undefined: none to say. */
  setWaitingReason(app: ApplicationInfo, reason: string | undefined): void {
    if (app.waitingReason === reason) return;
    app.waitingReason = reason;
    this.options.listener.app(app);
  }

  /**
   * An application's jobs and stages in brief, from its driver's report (operations/appStatus.ts):
   * active or completed (a driver's last report may come after its unregistering).
   */
  setAppProgress(app: ApplicationInfo, progress: AppProgress): void {
    app.progress = progress;
    if (this.idToApp.get(app.id) === app || this.completedApps.includes(app))
      this.options.listener.app(app);
  }

  /** A completed application still retained, by id. */
  completedAppById(id: string): ApplicationInfo | undefined {
    return this.completedApps.find((a) => a.id === id);
  }

  /**
   * Moves an application to the completed ones, ended `state` at `now` (FAILED: with `failure`
   * unless it has one already); false if it was not active. Its executors stay its own: the
   * caller removes them (removeExecutor), as it tells their workers.
   */
  finishApp(
    app: ApplicationInfo,
    end: { state: ApplicationState; now: number; failure?: AppFailure },
  ): boolean {
    if (this.idToApp.get(app.id) !== app) return false;
    this.idToApp.delete(app.id);
    this.addressToApp.delete(app.driver.address);
    remove(this.waiting, app);
    this.ranks.set(app, ++this.lastRank);
    app.state = end.state;
    app.endTime = end.now;
    if (end.state === 'FAILED' && !app.failure && end.failure) app.failure = end.failure;
    retain(this.completedApps, app, this.options.retainedApplications, (a) =>
      this.changed.appRemoved(a.id),
    );
    this.changed.app(app);
    return true;
  }

  // Executors

  /**
   * A new executor of `app` on `worker`, holding `cores` there. `recovered`: one a worker reported
   * to a recovering master, with its id and state.
   */
  addExecutor(
    app: ApplicationInfo,
    worker: WorkerInfo,
    cores: number,
    now: number,
    recovered?: { id: number; state: ExecutorState; resources?: ResourceAddresses },
  ): ExecutorDesc {
    const exec = app.addExecutor(worker, cores, now, recovered?.id);
    if (recovered) exec.setState(recovered.state, now);
    // A new executor gets the first free addresses (the scheduler saw them free); a recovered one
    // keeps those its worker says it holds.
    exec.resources = recovered
      ? structuredClone(recovered.resources ?? {})
      : (worker.resources.pick(app.desc.resourceReqsPerExecutor) ?? {});
    const refused = worker.addExecutor(exec);
    if (Object.keys(refused).length > 0) {
      log.warn(
        `Executor ${exec.fullId} on ${worker.id} said it holds ${JSON.stringify(refused)}, which the worker does not offer or another executor holds: not counted as its`,
      );
    }
    this.changed.app(app);
    this.changed.worker(worker);
    return exec;
  }

  /**
   * An executor's new state (of an active application, or the true end of one of a finished
   * application's). `failure`: it ended by itself with an error, the end of its stderr.
   */
  setExecutorState(
    app: ApplicationInfo,
    exec: ExecutorDesc,
    now: number,
    change: { state: ExecutorState; message?: string; exitStatus?: number; failure?: string },
  ): void {
    exec.setState(change.state, now, change.message, change.exitStatus);
    if (change.failure !== undefined) app.executorFailed(exec, change.failure, now);
    this.changed.app(app);
  }

  /**
   * An executor no longer runs: its worker's cores and memory are free, and its application (if
   * still known) lists it among the removed ones.
   */
  removeExecutor(app: ApplicationInfo | undefined, exec: ExecutorDesc): void {
    exec.worker.removeExecutor(exec);
    this.changed.worker(exec.worker);
    if (app) {
      app.removeExecutor(exec);
      this.changed.app(app);
    }
  }

  // Drivers

  /** The next driver id, `driver-<yyyyMMddHHmmss of now>-<number>`. */
  nextDriverId(now: number): string {
    return driverId(now, this.nextDriverNumber++);
  }

  /** Keeps the ids given later from colliding with a recovered driver's. */
  reserveDriverId(id: string): void {
    this.nextDriverNumber = Math.max(this.nextDriverNumber, numberOf(id) + 1);
  }

  /** An active driver. */
  driverById(id: string): DriverInfo | undefined {
    return this.drivers.get(id);
  }

  /** An active or a completed driver. */
  findDriver(id: string): DriverInfo | undefined {
    return this.drivers.get(id) ?? this.completedDrivers.find((d) => d.id === id);
  }

  /** The active driver that is `id` or its latest relaunch (shared/driverRuns.ts). */
  latestRunOf(id: string): DriverInfo | undefined {
    const run = latestRun([...this.drivers.values(), ...this.completedDrivers], id);
    return run && this.drivers.get(run.id) === run ? run : undefined;
  }

  /** The active drivers (a copy: callers may finish some while they walk it). */
  activeDrivers(): DriverInfo[] {
    return [...this.drivers.values()];
  }

  /** Drivers waiting for a worker, in the order they began to wait. */
  waitingDrivers(): readonly DriverInfo[] {
    return this.waitingDriverList;
  }

  isWaiting(driver: DriverInfo): boolean {
    return this.waitingDriverList.includes(driver);
  }

  /**
   * Adds an active driver: `waiting` for a worker (a submission, a relaunch), or not (one
   * recovered, which its worker may report).
   */
  addDriver(driver: DriverInfo, waiting: boolean): void {
    if (this.drivers.get(driver.id) !== driver) {
      this.drivers.delete(driver.id);
      this.drivers.set(driver.id, driver);
      this.ranks.set(driver, ++this.lastRank);
    }
    if (waiting && !this.waitingDriverList.includes(driver)) this.waitingDriverList.push(driver);
    this.changed.driver(driver);
  }

  /** A driver RUNNING on `worker` (launched there, or reported by it to a recovering master). */
  driverRunsOn(driver: DriverInfo, worker: WorkerInfo): void {
    remove(this.waitingDriverList, driver);
    worker.addDriver(driver);
    driver.worker = worker;
    driver.state = 'RUNNING';
    this.changed.worker(worker);
    this.changed.driver(driver);
  }

  /** An active driver's state as its worker reports it (not a final one: see finishDriver). */
  setDriverState(driver: DriverInfo, state: DriverState): void {
    driver.state = state;
    this.changed.driver(driver);
  }

  /**
   * Moves a driver to the completed ones, ended `state` (with `exception`), its worker's cores
   * and memory freed; false if it was not active.
   */
  finishDriver(driver: DriverInfo, state: DriverState, exception?: string): boolean {
    if (this.drivers.get(driver.id) !== driver) return false;
    this.drivers.delete(driver.id);
    remove(this.waitingDriverList, driver);
    this.ranks.set(driver, ++this.lastRank);
    driver.state = state;
    driver.exception = exception;
    if (driver.worker) {
      driver.worker.removeDriver(driver);
      this.changed.worker(driver.worker);
    }
    retain(this.completedDrivers, driver, this.options.retainedDrivers, (d) =>
      this.changed.driverRemoved(d.id),
    );
    this.changed.driver(driver);
    return true;
  }

  // All of it

  /** Whether a worker or an application has not answered a recovering master yet. */
  anyUnknown(): boolean {
    for (const w of this.workers.values()) if (w.state === 'UNKNOWN') return true;
    for (const a of this.idToApp.values()) if (a.state === 'UNKNOWN') return true;
    return false;
  }

  summaries(): ClusterSummaries {
    return {
      workers: [...this.workers.values()].map((w) => w.summary()),
      activeApps: [...this.idToApp.values()].map((a) => a.summary()),
      completedApps: this.completedApps.map((a) => a.summary()),
      activeDrivers: [...this.drivers.values()].map((d) => d.summary()),
      completedDrivers: this.completedDrivers.map((d) => d.summary()),
    };
  }

  /** Applications active now. */
  get activeAppCount(): number {
    return this.idToApp.size;
  }

  /** Drivers active now (waiting, running, relaunching). */
  get activeDriverCount(): number {
    return this.drivers.size;
  }

  /**
   * One page of summaries(): the entries after `after` (or from the first), in the order of the
   * tables (workers, active and completed applications, active and completed drivers), until
   * `maxEntries` or about `maxBytes` of JSON (at least one entry, however large); `next` is where
   * the following page starts, absent on the last.
   */
  page(after: StatePosition | undefined, maxEntries: number, maxBytes: number): StatePage {
    const out: ClusterSummaries = {
      workers: [],
      activeApps: [],
      completedApps: [],
      activeDrivers: [],
      completedDrivers: [],
    };
    let entries = 0;
    let bytes = 0;
    let last: StatePosition | undefined;
    for (const { table, entry, rank } of this.entriesAfter(after)) {
      if (entries > 0 && (entries >= maxEntries || bytes >= maxBytes)) {
        return { summaries: out, next: last };
      }
      const summary = entry.summary();
      (out[STATE_TABLES[table]] as unknown[]).push(summary);
      entries++;
      // A page's size is what its entries take as JSON; the header is small.
      bytes += JSON.stringify(summary).length;
      last = { table, rank };
    }
    return { summaries: out };
  }

  private *entriesAfter(after: StatePosition | undefined): Generator<{
    table: StateTable;
    entry: { summary(): unknown };
    rank: number;
  }> {
    const tables: [StateTable, Iterable<{ summary(): unknown }>][] = [
      ['w', this.workers.values()],
      ['a', this.idToApp.values()],
      ['c', this.completedApps],
      ['d', this.drivers.values()],
      ['e', this.completedDrivers],
    ];
    const from = after ? STATE_TABLE_ORDER.indexOf(after.table) : 0;
    for (const [i, [table, entries]] of tables.entries()) {
      if (i < from) continue;
      const skipTo = after && i === from ? after.rank : 0;
      for (const entry of entries) {
        const rank = this.ranks.get(entry) ?? 0;
        if (rank > skipTo) yield { table, entry, rank };
      }
    }
  }

  /** Forgets everything (a master that stops leading); the id counters go on. */
  clear(): void {
    this.placementMayChange();
    const listener = this.changed;
    for (const id of this.workers.keys()) listener.workerRemoved(id);
    for (const a of [...this.idToApp.values(), ...this.completedApps]) listener.appRemoved(a.id);
    for (const d of [...this.drivers.values(), ...this.completedDrivers]) {
      listener.driverRemoved(d.id);
    }
    this.workers.clear();
    this.deadAt.clear();
    this.idToWorker.clear();
    this.addressToWorker.clear();
    this.idToApp.clear();
    this.addressToApp.clear();
    this.waiting.length = 0;
    this.completedApps.length = 0;
    this.drivers.clear();
    this.waitingDriverList.length = 0;
    this.completedDrivers.length = 0;
  }
}

/** The number at the end of an id (`app-20250101120000-0007` → 7); -1 if there is none. */
function numberOf(id: string): number {
  const n = Number(id.slice(id.lastIndexOf('-') + 1));
  return Number.isInteger(n) ? n : -1;
}

function remove<T>(list: T[], item: T): void {
  const i = list.indexOf(item);
  if (i >= 0) list.splice(i, 1);
}

/** Keeps at most `max` entries, dropping the oldest tenth when full (as Spark does). */
function retain<T>(list: T[], item: T, max: number, dropped: (t: T) => void): void {
  if (list.length >= max) {
    for (const t of list.splice(0, Math.max(1, Math.floor(max / 10)))) dropped(t);
  }
  list.push(item);
}
