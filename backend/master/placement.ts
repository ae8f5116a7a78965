import { MasterConf } from '../conf/master.js';
import { ExecutorAdded } from '../protocol/app.js';
import { MAX_APP_EXECUTORS } from '../protocol/bounds.js';
import { LaunchDriver, LaunchExecutor } from '../protocol/deploy.js';
import type { TimerHandle } from '../util/clock.js';
import { getLogger } from '../util/log.js';
import type { ApplicationInfo } from './ApplicationInfo.js';
import type { ClusterState } from './ClusterState.js';
import type { DriverInfo } from './DriverInfo.js';
import type { OperationsContext } from './operations/context.js';
import * as scheduling from './scheduling.js';
import type { WorkerInfo } from './WorkerInfo.js';

/**
 * Spark's Master.schedule(), launchDriver and launchExecutor: what scheduling.ts decides, done.
 * The decision is a pure function of the waiting drivers and apps and the alive workers; this
 * module feeds it from the cluster's tables and carries out its assignments (the tables, the
 * workers' and drivers' LaunchDriver / LaunchExecutor / ExecutorAdded; the tables tell the
 * subscribers).
 */

const log = getLogger('Master');

/**
 * Places waiting drivers, then executors for waiting apps; a leader's business only.
 *
 * Placement places all it can, so once it has run, a waiting app or driver fits no worker until
 * something changes. When the only change since is workers added (a registration), only they can
 * take anything, and they are all it looks at: the assignments are those of a walk over every
 * worker (ClusterState.placementChanges). The waiting reasons, which describe every worker, are
 * then brought up to date within REASONS_LATER_MS instead of at each registration.
 */
export function schedule(m: OperationsContext): void {
  if (m.status !== 'ALIVE') return;
  const { cluster } = m;
  const apps = appsWanting(cluster);
  const waitingDrivers = cluster.waitingDrivers();
  // Nothing waits: nothing to place and no waiting reason to update. Without this, every worker
  // registration walked and sorted all workers: quadratic, 20 s of CPU to register 10,000.
  if (apps.length === 0 && waitingDrivers.length === 0) {
    cluster.placementSettled();
    return;
  }
  const changes = cluster.placementChanges();
  const workers = changes.everything
    ? aliveWorkers(cluster)
    : changes.added.filter((w) => w.isAlive && cluster.workerById(w.id) === w);
  const result = scheduling.schedule({
    drivers: waitingDrivers.map((d) => ({ id: d.id, mem: d.desc.mem, cores: d.desc.cores })),
    apps: apps.map((a) => ({
      id: a.id,
      coresLeft: a.coresLeft,
      memoryPerExecutorMB: a.desc.memoryPerExecutorMB,
      coresPerExecutor: a.desc.coresPerExecutor,
      executorCount: a.executors.size,
      // Every app has a limit: its own (RequestExecutors) or the protocol's MAX_APP_EXECUTORS.
      executorLimit: Math.min(a.executorLimit ?? MAX_APP_EXECUTORS, MAX_APP_EXECUTORS),
      resourceReqsPerExecutor: a.desc.resourceReqsPerExecutor,
    })),
    workers: workers.map(schedWorker),
    spreadOut: m.conf.get(MasterConf.spreadOut),
    random: m.random,
  });
  for (const { driverId, workerId } of result.drivers) {
    const driver = cluster.driverById(driverId) as DriverInfo;
    const worker = cluster.workerById(workerId) as WorkerInfo;
    launchDriver(m, worker, driver);
  }
  for (const a of result.executors) {
    const app = cluster.appById(a.appId) as ApplicationInfo;
    const worker = cluster.workerById(a.workerId) as WorkerInfo;
    launchExecutor(m, worker, app, a.cores);
  }
  cluster.placementSettled();
  if (changes.everything) {
    reasonsDue.get(cluster)?.cancel();
    reasonsDue.delete(cluster);
    updateWaitingReasons(m, apps, workers);
  } else if (!reasonsDue.has(cluster)) {
    reasonsDue.set(
      cluster,
      m.clock.setTimeout(() => {
        reasonsDue.delete(cluster);
        if (m.status === 'ALIVE')
          updateWaitingReasons(m, appsWanting(cluster), aliveWorkers(cluster));
      }, REASONS_LATER_MS),
    );
  }
}

/** The active apps that may still be granted cores, in FIFO order. */
function appsWanting(cluster: ClusterState): ApplicationInfo[] {
  return cluster.waitingApps().filter((a) => a.coresLeft > 0);
}

function aliveWorkers(cluster: ClusterState): WorkerInfo[] {
  return [...cluster.registeredWorkers()].filter((w) => w.isAlive);
}

/** How long waiting reasons may lag behind workers registering. */
export const REASONS_LATER_MS = 500;

/** A cluster's waiting reasons due to be brought up to date (see schedule). */
const reasonsDue = new WeakMap<ClusterState, TimerHandle>();

/** Cancels what placement has left to do later: the master is stopping. */
export function stopPlacement(m: OperationsContext): void {
  reasonsDue.get(m.cluster)?.cancel();
  reasonsDue.delete(m.cluster);
}

function launchDriver(m: OperationsContext, worker: WorkerInfo, driver: DriverInfo): void {
  log.info(`Launching driver ${driver.id} on worker ${worker.id}`);
  m.cluster.driverRunsOn(driver, worker);
  worker.endpoint.send(LaunchDriver({ driverId: driver.id, driverDesc: driver.desc }));
}

function launchExecutor(
  m: OperationsContext,
  worker: WorkerInfo,
  app: ApplicationInfo,
  cores: number,
): void {
  const exec = m.cluster.addExecutor(app, worker, cores, m.clock.now());
  log.info(`Launching executor ${exec.fullId} on worker ${worker.id}`);
  worker.endpoint.send(
    LaunchExecutor({
      masterUrl: m.masterUrl,
      appId: app.id,
      execId: exec.id,
      appDesc: app.desc,
      cores: exec.cores,
      memory: exec.memory,
      ...(Object.keys(exec.resources).length > 0 ? { resources: exec.resources } : {}),
    }),
  );
  app.driver.send(
    ExecutorAdded({
      id: exec.id,
      workerId: worker.id,
      hostPort: worker.hostPort,
      cores: exec.cores,
      memory: exec.memory,
    }),
  );
  m.cluster.setAppState(app, 'RUNNING');
}

function updateWaitingReasons(
  m: OperationsContext,
  apps: ApplicationInfo[],
  alive: WorkerInfo[],
): void {
  if (!apps.some((app) => app.state === 'WAITING')) return;
  const byId = new Map(alive.map((w) => [w.id, w]));
  const reasonFor = scheduling.waitingReasons(
    alive.map(schedWorker),
    (w) => byId.get(w.id)?.memory ?? 0,
    (w) => totalResources(byId.get(w.id)),
  );
  for (const app of apps) {
    if (app.state !== 'WAITING') continue;
    const reason = reasonFor({
      id: app.id,
      coresLeft: app.coresLeft,
      memoryPerExecutorMB: app.desc.memoryPerExecutorMB,
      coresPerExecutor: app.desc.coresPerExecutor,
      resourceReqsPerExecutor: app.desc.resourceReqsPerExecutor,
    });
    m.cluster.setWaitingReason(app, reason);
  }
}

/** A worker as the pure scheduler sees it: what it has free. */
function schedWorker(w: WorkerInfo): scheduling.SchedWorker {
  const s: scheduling.SchedWorker = { id: w.id, coresFree: w.coresFree, memoryFree: w.memoryFree };
  if (!w.resources.isEmpty) s.resourcesFree = w.resources.freeAmounts();
  return s;
}

function totalResources(w: WorkerInfo | undefined): Record<string, number> | undefined {
  if (!w || w.resources.isEmpty) return undefined;
  const out: Record<string, number> = {};
  for (const [name, list] of Object.entries(w.resources.addresses())) out[name] = list.length;
  return out;
}
