import {
  ApplicationFinished,
  MasterChanged,
  MasterInStandby,
  ReconnectWorker,
  RegisteredWorker,
  RegisterWorkerFailed,
  WorkerLatestState,
  WorkerSchedulerStateResponse,
} from '../../protocol/deploy.js';
import { getLogger } from '../../util/log.js';
import { ReregisterWithMaster, SendHeartbeat } from '../messages.js';
import type { Worker } from '../Worker.js';
import type { HandlerRegistry } from './on.js';

/**
 * Worker ↔ Master: registration with retries, heartbeats, following a master change, and a
 * finished application's dirs (Spark's Worker.handleRegisterResponse and its receive cases). The
 * connection's state and timers are the MasterConnection's; these handlers feed it.
 */

const log = getLogger('Worker');

export function masterHandlers(w: Worker, { on }: HandlerRegistry): void {
  const connection = w.masterConnection;

  on(RegisteredWorker, (msg) => {
    connection.registeredWith(
      w.rpcEnv.endpointRef(msg.master),
      msg.masterWebUiUrl,
      msg.masterAddress,
    );
    w.workDirCleaner.start();
    connection.send(WorkerLatestState(runnersState(w)));
    w.decommission.reannounce();
  });

  on(RegisterWorkerFailed, (msg) => {
    if (connection.registered) return;
    log.error(`Worker registration failed: ${msg.message}`);
    w.exit(1, `Worker registration failed: ${msg.message}`);
  });

  // Not yet ready; another master may answer.
  on(MasterInStandby, () => {});

  on(MasterChanged, (msg) => {
    log.info(`Master has changed, new master is at wick://${msg.master.address}`);
    connection.changeMaster(
      w.rpcEnv.endpointRef(msg.master),
      msg.masterWebUiUrl,
      msg.master.address,
    );
    connection.send(WorkerSchedulerStateResponse(runnersState(w)));
    w.decommission.reannounce();
  });

  on(ReconnectWorker, (msg) => {
    log.info(`Master with url ${msg.masterUrl} requested this worker to reconnect.`);
    connection.register();
  });

  on(ApplicationFinished, (msg) => w.appDirectories.applicationFinished(msg.id));

  on(SendHeartbeat, () => connection.sendHeartbeat());

  on(ReregisterWithMaster, () => connection.retry());
}

/** What runs here, as WorkerLatestState and WorkerSchedulerStateResponse tell the master. */
function runnersState(w: Worker) {
  return {
    id: w.workerId,
    executors: w.runners.runningExecutors().map((r) => ({
      appId: r.appId,
      execId: r.execId,
      cores: r.cores,
      state: r.state,
      // A recovering master takes back which addresses each executor holds from this.
      ...(Object.keys(r.resources).length > 0 ? { resources: r.resources } : {}),
    })),
    driverIds: w.runners.runningDriverIds(),
  };
}
