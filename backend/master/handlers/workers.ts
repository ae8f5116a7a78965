import { MasterConf } from '../../conf/master.js';
import { ExecutorUpdated, WorkerRemoved } from '../../protocol/app.js';
import {
  Heartbeat,
  KillDriver,
  KillExecutor,
  MasterInStandby,
  ReconnectWorker,
  RegisteredWorker,
  RegisterWorker,
  RegisterWorkerFailed,
  WorkerLatestState,
  WorkerSchedulerStateResponse,
} from '../../protocol/deploy.js';
import type { MessageOf } from '../../protocol/registry.js';
import type { RpcEndpointRef, RpcSenderContext } from '../../rpc/index.js';
import { getLogger } from '../../util/log.js';
import type { HandlerRegistry, Master } from '../Master.js';
import { CheckForWorkerTimeOut } from '../messages.js';
import { schedule } from '../placement.js';
import { checkFromWorker } from '../senders.js';
import { WorkerInfo } from '../WorkerInfo.js';
import { relaunchDriver, removeDriver } from './drivers.js';

/** Worker → Master: registration, heartbeats, reconciliation, and the worker time-out. */

const log = getLogger('Master');

export function workerHandlers(m: Master, on: HandlerRegistry): void {
  on(RegisterWorker, (msg, sender) => registerWorker(m, msg, sender));
  // Heartbeats are nearly all a master receives (one per worker every timeout/4): their handler
  // is synchronous, so the inbox need not await a promise per heartbeat.
  on(Heartbeat, (msg, sender) => heartbeat(m, msg, sender));
  on(WorkerLatestState, (msg, sender) => workerLatestState(m, msg, sender));
  on(WorkerSchedulerStateResponse, (msg, sender) => workerSchedulerState(m, msg, sender));
  on(CheckForWorkerTimeOut, () => timeOutDeadWorkers(m));
}

/** Adds a worker, replacing an UNKNOWN one at the same address; false if that address is taken. */
export async function addWorker(m: Master, worker: WorkerInfo): Promise<boolean> {
  m.cluster.forgetDeadWorkersAt(worker.host, worker.port);
  const address = worker.endpoint.address;
  const old = m.cluster.workerByAddress(address);
  if (old) {
    if (old.state !== 'UNKNOWN') {
      log.info(`Attempted to re-register worker at same address: ${address}`);
      return false;
    }
    await removeWorker(m, old, 'Worker replaced by a new worker with same address');
  }
  m.cluster.addWorker(worker);
  m.broadcaster.worker(worker);
  return true;
}

/**
 * A worker is lost: its executors are LOST (their apps told), its drivers relaunched if
 * supervised, every app told, and what waited on it scheduled elsewhere.
 */
export async function removeWorker(m: Master, worker: WorkerInfo, why: string): Promise<void> {
  log.info(`Removing worker ${worker.id} on ${worker.hostPort}: ${why}`);
  m.cluster.markWorkerDead(worker);
  for (const exec of [...worker.executors.values()]) {
    const app = m.cluster.appById(exec.appId);
    exec.setState('LOST', m.clock.now(), 'worker lost');
    worker.removeExecutor(exec);
    if (app) {
      app.driver.send(
        ExecutorUpdated({ id: exec.id, state: 'LOST', message: 'worker lost', workerLost: true }),
      );
      app.removeExecutor(exec);
      m.broadcaster.app(app);
    }
  }
  for (const driver of [...worker.drivers.values()]) {
    if (driver.desc.supervise) {
      await relaunchDriver(m, driver);
    } else {
      log.info(`Not re-launching ${driver.id} because it was not supervised`);
      await removeDriver(m, driver.id, 'ERROR', undefined);
    }
  }
  for (const app of m.cluster.activeApps()) {
    app.driver.send(WorkerRemoved({ id: worker.id, host: worker.host, message: why }));
  }
  m.broadcaster.worker(worker);
  await m.persistence.removeWorker(worker.id);
  schedule(m);
}

/** A ref to the worker's endpoint over the connection `sender` came on (its own, not an address). */
function replyRef(m: Master, sender: RpcSenderContext, name: string): RpcEndpointRef {
  return sender.connection
    ? m.rpcEnv.refOver(sender.connection, name)
    : m.rpcEnv.endpointRef({ address: sender.senderAddress, name });
}

async function registerWorker(
  m: Master,
  msg: MessageOf<typeof RegisterWorker>,
  sender: RpcSenderContext,
): Promise<void> {
  const ref = replyRef(m, sender, msg.worker.name);
  log.info(
    `Registering worker ${msg.host}:${msg.port} with ${msg.cores} cores, ${msg.memory} MiB RAM`,
  );
  if (m.state === 'STANDBY') {
    ref.send(MasterInStandby({}));
    return;
  }
  if (m.cluster.workerById(msg.id)) {
    ref.send(RegisterWorkerFailed({ message: 'Duplicate worker ID' }));
    return;
  }
  const full = m.cluster.roomForWorker();
  if (full) {
    log.warn(`Worker registration from ${ref.address} refused: ${full}`);
    ref.send(RegisterWorkerFailed({ message: full }));
    return;
  }
  const worker = new WorkerInfo(
    msg.id,
    msg.host,
    msg.port,
    msg.cores,
    msg.memory,
    ref,
    msg.workerWebUiUrl,
    m.clock.now(),
    sender.connection,
  );
  if (!(await addWorker(m, worker))) {
    const why = `Attempted to re-register worker at same address: ${ref.address}`;
    log.warn(`Worker registration failed. ${why}`);
    ref.send(RegisterWorkerFailed({ message: why }));
    return;
  }
  await m.persistence.addWorker({
    id: worker.id,
    host: worker.host,
    port: worker.port,
    cores: worker.cores,
    memory: worker.memory,
    endpoint: ref.toData(),
    webUiAddress: worker.webUiAddress,
  });
  ref.send(
    RegisteredWorker({
      master: m.self.toData(),
      masterWebUiUrl: m.webUiUrl,
      masterAddress: m.address,
    }),
  );
  schedule(m);
}

// The hot path: one map lookup, one store and a mark, nothing allocated for a registered worker.
// The mark pushes the worker's new lastHeartbeat to subscribers (one entry per worker per
// heartbeat, wick.worker.timeout / 4): the dashboards' "Last heartbeat" is live, not the time of
// the worker's last other change.
function heartbeat(m: Master, msg: MessageOf<typeof Heartbeat>, sender: RpcSenderContext): void {
  const worker = m.cluster.workerById(msg.workerId);
  if (worker) {
    checkFromWorker(worker, sender, `Heartbeat of ${worker.id}`);
    worker.lastHeartbeat = m.clock.now();
    m.broadcaster.worker(worker);
    return;
  }
  if (m.cluster.knowsWorker(msg.workerId)) {
    log.warn(`Got heartbeat from unregistered worker ${msg.workerId}. Asking it to re-register.`);
    replyRef(m, sender, msg.worker.name).send(ReconnectWorker({ masterUrl: m.masterUrl }));
  } else {
    log.warn(
      `Got heartbeat from unregistered worker ${msg.workerId}. This worker was never registered, so ignoring the heartbeat.`,
    );
  }
}

/** Kills whatever a worker runs that the master does not know (after a master restart, say). */
function workerLatestState(
  m: Master,
  msg: MessageOf<typeof WorkerLatestState>,
  sender: RpcSenderContext,
): void {
  const worker = m.cluster.workerById(msg.id);
  if (!worker) {
    log.warn(`Worker state from unknown worker: ${msg.id}`);
    return;
  }
  checkFromWorker(worker, sender, `WorkerLatestState of ${worker.id}`);
  for (const e of msg.executors) {
    if (!worker.executors.has(`${e.appId}/${e.execId}`)) {
      log.info(
        `Killing executor ${e.appId}/${e.execId} on ${worker.id}: the master does not know it`,
      );
      worker.endpoint.send(
        KillExecutor({ masterUrl: m.masterUrl, appId: e.appId, execId: e.execId }),
      );
    }
  }
  for (const driverId of msg.driverIds) {
    if (!worker.drivers.has(driverId)) {
      log.info(`Killing driver ${driverId} on ${worker.id}: the master does not know it`);
      worker.endpoint.send(KillDriver({ driverId }));
    }
  }
}

/** A worker answers MasterChanged during recovery: take back what it runs. */
async function workerSchedulerState(
  m: Master,
  msg: MessageOf<typeof WorkerSchedulerStateResponse>,
  sender: RpcSenderContext,
): Promise<void> {
  const worker = m.cluster.workerById(msg.id);
  if (!worker) {
    log.warn(`Scheduler state from unknown worker: ${msg.id}`);
  } else {
    // A recovered worker answers the master change over a connection it dials itself: from then
    // on that connection is the worker's. One that answered already may not be answered for.
    if (worker.state !== 'UNKNOWN' || worker.connection?.isOpen) {
      checkFromWorker(worker, sender, `WorkerSchedulerStateResponse of ${worker.id}`);
    } else if (sender.connection) {
      worker.connection = sender.connection;
      worker.endpoint = m.rpcEnv.refOver(sender.connection, worker.endpoint.name);
    }
    log.info(`Worker has been re-registered: ${msg.id}`);
    worker.state = 'ALIVE';
    worker.lastHeartbeat = m.clock.now();
    for (const e of msg.executors) {
      const app = m.cluster.appById(e.appId);
      if (!app) continue;
      const exec = app.addExecutor(worker, e.cores, m.clock.now(), e.execId);
      exec.setState(e.state, m.clock.now());
      // It ran through a change of master, which does not hear its driver's ExecutorRegistered.
      exec.registered = e.state === 'RUNNING';
      worker.addExecutor(exec);
      m.broadcaster.app(app);
    }
    for (const driverId of msg.driverIds) {
      const driver = m.cluster.driverById(driverId);
      if (!driver) continue;
      driver.worker = worker;
      driver.state = 'RUNNING';
      worker.addDriver(driver);
      m.broadcaster.driver(driver);
    }
    m.broadcaster.worker(worker);
  }
  await m.recovery.completeIfAnswered();
}

/** Marks silent workers DEAD, and forgets DEAD ones after wick.dead.worker.persistence timeouts. */
async function timeOutDeadWorkers(m: Master): Promise<void> {
  const now = m.clock.now();
  const timeout = m.workerTimeoutMs;
  const reaperIterations = m.conf.get(MasterConf.deadWorkerPersistence);
  for (const worker of m.cluster.allWorkers()) {
    if (worker.lastHeartbeat >= now - timeout) continue;
    if (worker.state !== 'DEAD') {
      log.warn(`Removing ${worker.id} because we got no heartbeat in ${timeout / 1000} seconds`);
      await removeWorker(m, worker, `Not receiving heartbeat for ${timeout / 1000} seconds`);
    } else if (worker.lastHeartbeat < now - (reaperIterations + 1) * timeout) {
      m.cluster.forgetWorker(worker);
    }
  }
}
