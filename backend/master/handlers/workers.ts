import {
  type Heartbeat,
  KillDriver,
  KillExecutor,
  MasterInStandby,
  ReconnectWorker,
  RegisteredWorker,
  type RegisterWorker,
  RegisterWorkerFailed,
  type WorkerLatestState,
  type WorkerSchedulerStateResponse,
} from '../../protocol/deploy.js';
import type { MessageOf, WireMessage } from '../../protocol/registry.js';
import { getLogger } from '../../util/log.js';
import { MasterConf } from '../config.js';
import type { Master } from '../Master.js';
import { completeRecovery } from '../recovery.js';
import { WorkerInfo } from '../WorkerInfo.js';

/** Worker → Master: registration, heartbeats, reconciliation, and the worker time-out. */

const log = getLogger('Master');

export async function receive(m: Master, msg: WireMessage): Promise<boolean> {
  switch (msg.type) {
    case 'RegisterWorker':
      await registerWorker(m, msg as MessageOf<typeof RegisterWorker>);
      return true;
    case 'WorkerLatestState':
      workerLatestState(m, msg as MessageOf<typeof WorkerLatestState>);
      return true;
    case 'WorkerSchedulerStateResponse':
      await workerSchedulerState(m, msg as MessageOf<typeof WorkerSchedulerStateResponse>);
      return true;
    case 'CheckForWorkerTimeOut':
      await timeOutDeadWorkers(m);
      return true;
    case 'CompleteRecovery':
      await completeRecovery(m);
      return true;
    default:
      return false;
  }
}

async function registerWorker(m: Master, msg: MessageOf<typeof RegisterWorker>): Promise<void> {
  const ref = m.rpcEnv.endpointRef(msg.worker);
  log.info(
    `Registering worker ${msg.host}:${msg.port} with ${msg.cores} cores, ${msg.memory} MiB RAM`,
  );
  if (m.state === 'STANDBY') {
    ref.send(MasterInStandby({}));
    return;
  }
  if (m.idToWorker.has(msg.id)) {
    ref.send(RegisterWorkerFailed({ message: 'Duplicate worker ID' }));
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
  );
  if (!(await m.registerWorker(worker))) {
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
  m.schedule();
}

/** Handled apart, synchronously, by Master.receive: see there. */
export function heartbeat(m: Master, msg: MessageOf<typeof Heartbeat>): void {
  const worker = m.idToWorker.get(msg.workerId);
  if (worker) {
    worker.lastHeartbeat = m.clock.now();
    return;
  }
  if (m.workers.has(msg.workerId)) {
    log.warn(`Got heartbeat from unregistered worker ${msg.workerId}. Asking it to re-register.`);
    m.rpcEnv.endpointRef(msg.worker).send(ReconnectWorker({ masterUrl: m.masterUrl }));
  } else {
    log.warn(
      `Got heartbeat from unregistered worker ${msg.workerId}. This worker was never registered, so ignoring the heartbeat.`,
    );
  }
}

/** Kills whatever a worker runs that the master does not know (after a master restart, say). */
function workerLatestState(m: Master, msg: MessageOf<typeof WorkerLatestState>): void {
  const worker = m.idToWorker.get(msg.id);
  if (!worker) {
    log.warn(`Worker state from unknown worker: ${msg.id}`);
    return;
  }
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
): Promise<void> {
  const worker = m.idToWorker.get(msg.id);
  if (!worker) {
    log.warn(`Scheduler state from unknown worker: ${msg.id}`);
  } else {
    log.info(`Worker has been re-registered: ${msg.id}`);
    worker.state = 'ALIVE';
    worker.lastHeartbeat = m.clock.now();
    for (const e of msg.executors) {
      const app = m.idToApp.get(e.appId);
      if (!app) continue;
      const exec = app.addExecutor(worker, e.cores, m.clock.now(), e.execId);
      exec.setState(e.state, m.clock.now());
      worker.addExecutor(exec);
      m.broadcaster.app(app);
    }
    for (const driverId of msg.driverIds) {
      const driver = m.drivers.get(driverId);
      if (!driver) continue;
      driver.worker = worker;
      driver.state = 'RUNNING';
      worker.addDriver(driver);
      m.broadcaster.driver(driver);
    }
    m.broadcaster.worker(worker);
  }
  if (m.state === 'RECOVERING' && m.canCompleteRecovery()) await completeRecovery(m);
}

/** Marks silent workers DEAD, and forgets DEAD ones after wick.dead.worker.persistence timeouts. */
async function timeOutDeadWorkers(m: Master): Promise<void> {
  const now = m.clock.now();
  const timeout = m.workerTimeoutMs;
  const reaperIterations = m.conf.get(MasterConf.deadWorkerPersistence);
  for (const worker of [...m.workers.values()]) {
    if (worker.lastHeartbeat >= now - timeout) continue;
    if (worker.state !== 'DEAD') {
      log.warn(`Removing ${worker.id} because we got no heartbeat in ${timeout / 1000} seconds`);
      await m.removeWorker(worker, `Not receiving heartbeat for ${timeout / 1000} seconds`);
    } else if (worker.lastHeartbeat < now - (reaperIterations + 1) * timeout) {
      m.workers.delete(worker.id);
      m.broadcaster.workerRemoved(worker.id);
    }
  }
}
