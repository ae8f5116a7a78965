import type {
  ApplicationFinished,
  MasterChanged,
  ReconnectWorker,
  RegisteredWorker,
  RegisterWorkerFailed,
} from '../../protocol/deploy.js';
import { MASTER_ENDPOINT } from '../../protocol/endpoints.js';
import type { MessageOf, WireMessage } from '../../protocol/registry.js';
import { RpcAddress } from '../../rpc/index.js';
import { getLogger } from '../../util/log.js';
import { WorkerConf } from '../config.js';
import type { Worker } from '../Worker.js';

/**
 * Worker ↔ Master: registration with retries, heartbeats, and following a master change
 * (Spark's Worker.registerWithMaster / reregisterWithMaster / handleRegisterResponse).
 */

const log = getLogger('Worker');

export async function receive(w: Worker, msg: WireMessage): Promise<boolean> {
  switch (msg.type) {
    case 'RegisteredWorker':
      registered(w, msg as MessageOf<typeof RegisteredWorker>);
      return true;
    case 'RegisterWorkerFailed':
      if (!w.registered) {
        const why = (msg as MessageOf<typeof RegisterWorkerFailed>).message;
        log.error(`Worker registration failed: ${why}`);
        w.exit(1, `Worker registration failed: ${why}`);
      }
      return true;
    case 'MasterInStandby':
      // Not yet ready; another master may answer.
      return true;
    case 'MasterChanged': {
      const m = msg as MessageOf<typeof MasterChanged>;
      log.info(`Master has changed, new master is at wick://${m.master.address}`);
      changeMaster(w, w.rpcEnv.endpointRef(m.master), m.masterWebUiUrl, m.master.address);
      w.sendToMaster(w.latestState('scheduler'));
      return true;
    }
    case 'ReconnectWorker':
      log.info(
        `Master with url ${(msg as MessageOf<typeof ReconnectWorker>).masterUrl} requested this worker to reconnect.`,
      );
      registerWithMaster(w);
      return true;
    case 'SendHeartbeat':
      if (w.connected) w.sendToMaster(w.heartbeat());
      return true;
    case 'ReregisterWithMaster':
      reregisterWithMaster(w);
      return true;
    case 'ApplicationFinished': {
      const { id } = msg as MessageOf<typeof ApplicationFinished>;
      w.finishedApps.add(id);
      await w.maybeCleanupApplication(id);
      return true;
    }
    default:
      return false;
  }
}

/** Registers with every master now, and retries on a timer until one answers. */
export function registerWithMaster(w: Worker): void {
  if (w.registrationTimer) {
    log.info(
      'Not spawning another attempt to register with the master, since there is an attempt scheduled already.',
    );
    return;
  }
  w.registered = false;
  tryRegisterAllMasters(w);
  w.connectionAttemptCount = 0;
  scheduleRetry(w);
}

function scheduleRetry(w: Worker): void {
  const initial = w.connectionAttemptCount < w.conf.get(WorkerConf.initialRegistrationRetries);
  const base = w.conf.get(
    initial ? WorkerConf.initialRegistrationInterval : WorkerConf.prolongedRegistrationInterval,
  );
  // ×0.5 to ×1.5, so that workers restarted together do not all knock at once.
  const delay = Math.round(base * (0.5 + w.random()));
  w.registrationTimer = w.clock.setTimeout(() => {
    if (!w.rpcEnv.isStopped) w.self.send({ type: 'ReregisterWithMaster' });
  }, delay);
}

function reregisterWithMaster(w: Worker): void {
  w.registrationTimer = undefined;
  w.connectionAttemptCount++;
  if (w.registered) return;
  if (w.connectionAttemptCount <= w.conf.get(WorkerConf.maxRegistrationRetries)) {
    log.info(`Retrying connection to master (attempt # ${w.connectionAttemptCount})`);
    // SPARK-4592: once a master is known, re-register only with it, so that a worker does not end
    // up registered with two masters after a failover.
    if (w.master && w.masterAddress) sendRegistration(w, w.masterAddress);
    else tryRegisterAllMasters(w);
    scheduleRetry(w);
  } else {
    log.error('All masters are unresponsive! Giving up.');
    w.exit(1, 'All masters are unresponsive! Giving up.');
  }
}

function tryRegisterAllMasters(w: Worker): void {
  for (const address of w.masterAddresses) sendRegistration(w, address);
}

function sendRegistration(w: Worker, address: string): void {
  log.info(`Connecting to master ${address}...`);
  w.rpcEnv
    .setupEndpointRef(RpcAddress.parse(address), MASTER_ENDPOINT)
    .then((ref) => ref.send(w.registerWorkerMessage(address)))
    .catch((err: Error) => log.warn(`Failed to connect to master ${address}: ${err.message}`));
}

function registered(w: Worker, msg: MessageOf<typeof RegisteredWorker>): void {
  log.info(`Successfully registered with master wick://${msg.master.address}`);
  w.registered = true;
  w.registrationTimer?.cancel();
  w.registrationTimer = undefined;
  changeMaster(w, w.rpcEnv.endpointRef(msg.master), msg.masterWebUiUrl, msg.masterAddress);
  startHeartbeats(w);
  if (w.conf.get(WorkerConf.cleanupEnabled) && !w.cleanupTimer) {
    log.info(
      `Worker cleanup enabled; old application directories will be deleted in: ${w.workDir}`,
    );
    scheduleCleanup(w);
  }
  w.sendToMaster(w.latestState('latest'));
}

function changeMaster(
  w: Worker,
  ref: ReturnType<Worker['rpcEnv']['endpointRef']>,
  webUiUrl: string,
  address: string,
): void {
  w.master = ref;
  w.masterAddress = address;
  w.activeMasterUrl = `wick://${ref.address}`;
  w.activeMasterWebUiUrl = webUiUrl;
  w.connected = true;
  w.registrationTimer?.cancel();
  w.registrationTimer = undefined;
}

function startHeartbeats(w: Worker): void {
  w.heartbeatTimer?.cancel();
  const tick = () => {
    if (w.rpcEnv.isStopped) return;
    w.self.send({ type: 'SendHeartbeat' });
    w.heartbeatTimer = w.clock.setTimeout(tick, w.heartbeatMs);
  };
  tick();
}

function scheduleCleanup(w: Worker): void {
  w.cleanupTimer = w.clock.setTimeout(() => {
    if (w.rpcEnv.isStopped) return;
    w.self.send({ type: 'WorkDirCleanup' });
    scheduleCleanup(w);
  }, w.conf.get(WorkerConf.cleanupInterval));
}
