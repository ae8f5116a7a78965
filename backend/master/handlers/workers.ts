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
import { CheckForWorkerTimeOut } from '../messages.js';
import {
  registerWorker as addRegisteredWorker,
  timeOutDeadWorkers,
  workerHeartbeat,
  workerReregistered,
} from '../operations/workers.js';
import { schedule } from '../placement.js';
import { WorkerResourcePool } from '../resources/WorkerResourcePool.js';
import { checkFromWorker } from '../senders.js';
import { WorkerInfo } from '../WorkerInfo.js';
import type { HandlerContext, HandlerRegistry } from './context.js';

/** Worker → Master: registration, heartbeats, reconciliation, and the worker time-out. */

const log = getLogger('Master');

export function workerHandlers(m: HandlerContext, on: HandlerRegistry): void {
  on(RegisterWorker, (msg, sender) => registerWorker(m, msg, sender));
  // Heartbeats are nearly all a master receives (one per worker every timeout/4): their handler
  // is synchronous, so the inbox need not await a promise per heartbeat.
  on(Heartbeat, (msg, sender) => heartbeat(m, msg, sender));
  on(WorkerLatestState, (msg, sender) => workerLatestState(m, msg, sender));
  on(WorkerSchedulerStateResponse, (msg, sender) => workerSchedulerState(m, msg, sender));
  on(CheckForWorkerTimeOut, () => timeOutDeadWorkers(m.ops));
}

/** A ref to the worker's endpoint over the connection `sender` came on (its own, not an address). */
function replyRef(m: HandlerContext, sender: RpcSenderContext, name: string): RpcEndpointRef {
  return sender.connection
    ? m.rpc.refOver(sender.connection, name)
    : m.rpc.endpointRef({ address: sender.senderAddress, name });
}

async function registerWorker(
  m: HandlerContext,
  msg: MessageOf<typeof RegisterWorker>,
  sender: RpcSenderContext,
): Promise<void> {
  const ref = replyRef(m, sender, msg.worker.name);
  log.info(
    `Registering worker ${msg.host}:${msg.port} with ${msg.cores} cores, ${msg.memory} MiB RAM`,
  );
  if (m.status === 'STANDBY') {
    ref.send(MasterInStandby({}));
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
  worker.resources = new WorkerResourcePool(msg.resources);
  const refused = await addRegisteredWorker(m.ops, worker);
  if (refused) {
    ref.send(RegisterWorkerFailed({ message: refused }));
    return;
  }
  ref.send(
    RegisteredWorker({
      master: m.self.toData(),
      masterWebUiUrl: m.webUiUrl,
      // SPARK-20529: the address the worker dialled, not this master's own (bind) address: a
      // worker behind NAT or a proxy re-registers through the address that reached the master.
      masterAddress: msg.masterAddress,
    }),
  );
  schedule(m.ops);
}

// The hot path: one map lookup, one store and a mark, nothing allocated for a registered worker.
// The mark sends the worker's new lastHeartbeat to subscribers with the next push, or within a
// second (StateBroadcaster.HEARTBEAT_PUSH_MS): the dashboards' "Last heartbeat" is live, and
// 10,000 workers' heartbeats make one push a second, not 667.
function heartbeat(
  m: HandlerContext,
  msg: MessageOf<typeof Heartbeat>,
  sender: RpcSenderContext,
): void {
  const worker = m.cluster.workerById(msg.workerId);
  if (worker) {
    checkFromWorker(worker, sender, `Heartbeat of ${worker.id}`);
    workerHeartbeat(m.ops, worker);
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
  m: HandlerContext,
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
  m: HandlerContext,
  msg: MessageOf<typeof WorkerSchedulerStateResponse>,
  sender: RpcSenderContext,
): Promise<void> {
  const worker = m.cluster.workerById(msg.id);
  if (!worker) {
    log.warn(`Scheduler state from unknown worker: ${msg.id}`);
  } else {
    // A recovered worker answers the master change over a connection it dials itself: from then
    // on that connection is the worker's. One that answered already may not be answered for.
    let over: Parameters<typeof workerReregistered>[3];
    if (worker.state !== 'UNKNOWN' || worker.connection?.isOpen) {
      checkFromWorker(worker, sender, `WorkerSchedulerStateResponse of ${worker.id}`);
    } else if (sender.connection) {
      over = {
        connection: sender.connection,
        endpoint: m.rpc.refOver(sender.connection, worker.endpoint.name),
      };
    }
    workerReregistered(m.ops, worker, msg, over);
  }
  await m.completeRecoveryIfAnswered();
}
