import { MasterConf } from '../../conf/master.js';
import { ExecutorUpdated, WorkerRemoved } from '../../protocol/app.js';
import type { WorkerSchedulerStateResponse } from '../../protocol/deploy.js';
import type { MessageOf } from '../../protocol/registry.js';
import type { PeerConnection, RpcEndpointRef } from '../../rpc/index.js';
import { getLogger } from '../../util/log.js';
import { schedule } from '../placement.js';
import type { WorkerInfo } from '../WorkerInfo.js';
import type { OperationsContext } from './context.js';
import { relaunchDriver, removeDriver } from './drivers.js';

/** Workers joining, answering a recovering master, heartbeating, timing out, and being lost. */

const log = getLogger('Master');

/**
 * Adds a worker (UNKNOWN: one recovered from the persisted state), replacing an UNKNOWN one at
 * the same address and forgetting DEAD ones at its host:port; false if that address is taken.
 */
export async function addWorker(
  c: OperationsContext,
  worker: WorkerInfo,
  state: 'ALIVE' | 'UNKNOWN' = 'ALIVE',
): Promise<boolean> {
  c.cluster.forgetDeadWorkersAt(worker.host, worker.port);
  const address = worker.endpoint.address;
  const old = c.cluster.workerByAddress(address);
  if (old) {
    if (old.state !== 'UNKNOWN') {
      log.info(`Attempted to re-register worker at same address: ${address}`);
      return false;
    }
    await removeWorker(c, old, 'Worker replaced by a new worker with same address');
  }
  c.cluster.addWorker(worker, state);
  return true;
}

/**
 * A worker that registered: added and persisted; else why it may not be (RegisterWorkerFailed).
 * The caller answers it, then schedules (what it offers may start what waits).
 */
export async function registerWorker(
  c: OperationsContext,
  worker: WorkerInfo,
): Promise<string | undefined> {
  if (c.cluster.workerById(worker.id)) return 'Duplicate worker ID';
  const full = c.cluster.roomForWorker();
  if (full) {
    log.warn(`Worker registration from ${worker.endpoint.address} refused: ${full}`);
    return full;
  }
  if (!(await addWorker(c, worker))) {
    const why = `Attempted to re-register worker at same address: ${worker.endpoint.address}`;
    log.warn(`Worker registration failed. ${why}`);
    return why;
  }
  await c.persistence.addWorker({
    id: worker.id,
    host: worker.host,
    port: worker.port,
    cores: worker.cores,
    memory: worker.memory,
    endpoint: worker.endpoint.toData(),
    webUiAddress: worker.webUiAddress,
    ...(worker.resources.isEmpty ? {} : { resources: worker.resources.addresses() }),
  });
  return undefined;
}

/**
 * A worker is lost: its executors are LOST (their apps told), its drivers relaunched if
 * supervised, else ERROR; every app told, and what waited on it scheduled elsewhere.
 */
export async function removeWorker(
  c: OperationsContext,
  worker: WorkerInfo,
  why: string,
): Promise<void> {
  log.info(`Removing worker ${worker.id} on ${worker.hostPort}: ${why}`);
  c.cluster.markWorkerDead(worker);
  for (const exec of [...worker.executors.values()]) {
    const app = c.cluster.appById(exec.appId);
    if (app) {
      c.cluster.setExecutorState(app, exec, c.clock.now(), {
        state: 'LOST',
        message: 'worker lost',
      });
      app.driver.send(
        ExecutorUpdated({ id: exec.id, state: 'LOST', message: 'worker lost', workerLost: true }),
      );
    }
    c.cluster.removeExecutor(app, exec);
  }
  for (const driver of [...worker.drivers.values()]) {
    if (driver.desc.supervise) {
      await relaunchDriver(c, driver);
    } else {
      log.info(`Not re-launching ${driver.id} because it was not supervised`);
      await removeDriver(c, driver.id, 'ERROR', undefined);
    }
  }
  for (const app of c.cluster.activeApps()) {
    app.driver.send(WorkerRemoved({ id: worker.id, host: worker.host, message: why }));
  }
  await c.persistence.removeWorker(worker.id);
  schedule(c);
}

/** A registered worker's heartbeat. */
export function workerHeartbeat(c: OperationsContext, worker: WorkerInfo): void {
  c.cluster.workerHeartbeat(worker, c.clock.now());
}

/**
 * A worker answered a recovering master (WorkerSchedulerStateResponse): ALIVE again, and what it
 * runs is taken back: the executors of applications still known, the drivers still active.
 * `over`: the connection it answered on, from then on its own.
 */
export function workerReregistered(
  c: OperationsContext,
  worker: WorkerInfo,
  report: MessageOf<typeof WorkerSchedulerStateResponse>,
  over?: { connection: PeerConnection; endpoint: RpcEndpointRef },
): void {
  log.info(`Worker has been re-registered: ${worker.id}`);
  c.cluster.workerReregistered(worker, c.clock.now(), over);
  for (const e of report.executors) {
    const app = c.cluster.appById(e.appId);
    if (!app) continue;
    const exec = c.cluster.addExecutor(app, worker, e.cores, c.clock.now(), {
      id: e.execId,
      state: e.state,
      ...(e.resources ? { resources: e.resources } : {}),
    });
    // It ran through a change of master, which does not hear its driver's ExecutorRegistered.
    exec.registered = e.state === 'RUNNING';
  }
  for (const driverId of report.driverIds) {
    const driver = c.cluster.driverById(driverId);
    if (driver) c.cluster.driverRunsOn(driver, worker);
  }
}

/** Marks silent workers DEAD, and forgets DEAD ones after wick.dead.worker.persistence timeouts. */
export async function timeOutDeadWorkers(c: OperationsContext): Promise<void> {
  const now = c.clock.now();
  const timeout = c.workerTimeoutMs;
  const reaperIterations = c.conf.get(MasterConf.deadWorkerPersistence);
  for (const worker of c.cluster.allWorkers()) {
    if (worker.lastHeartbeat >= now - timeout) continue;
    // Registered (a decommissioned one that left is no longer, though not DEAD).
    if (c.cluster.workerById(worker.id) === worker) {
      log.warn(`Removing ${worker.id} because we got no heartbeat in ${timeout / 1000} seconds`);
      await removeWorker(c, worker, `Not receiving heartbeat for ${timeout / 1000} seconds`);
    } else if (worker.lastHeartbeat < now - (reaperIterations + 1) * timeout) {
      c.cluster.forgetWorker(worker);
    }
  }
}
