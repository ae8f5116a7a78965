import { truncateMessage } from '../../protocol/bounds.js';
import type { ApplicationDescription } from '../../protocol/common.js';
import {
  DriverStateChanged,
  ExecutorStateChanged,
  KillDriver,
  KillExecutor,
  LaunchDriver,
  LaunchExecutor,
} from '../../protocol/deploy.js';
import type { MessageOf } from '../../protocol/registry.js';
import {
  MAX_APP_COMMAND_QUOTE,
  RequestWorkerState,
  WorkerStateResponse,
} from '../../protocol/worker.js';
import { getLogger } from '../../util/log.js';
import { DriverRunner } from '../DriverRunner.js';
import { ExecutorRunner } from '../ExecutorRunner.js';
import { formatCommand } from '../process/substitute.js';
import type { Worker } from '../Worker.js';
import type { HandlerRegistry } from './on.js';

/**
 * Master → Worker: launching and killing executors and drivers, with the cores and memory they
 * hold; how each ends, told to the master; and the worker's state, for its page and clients.
 */

const log = getLogger('Worker');

export function launchHandlers(w: Worker, { on }: HandlerRegistry): void {
  // Awaited by the inbox: the next LaunchExecutor of the same application finds its dirs made.
  on(LaunchExecutor, (msg) => launchExecutor(w, msg));

  on(KillExecutor, (msg) => {
    if (msg.masterUrl !== w.masterConnection.activeMasterUrl) {
      log.warn(
        `Invalid Master (${msg.masterUrl}) attempted to kill executor ${msg.appId}/${msg.execId}`,
      );
      return;
    }
    const runner = w.runners.executor(`${msg.appId}/${msg.execId}`);
    if (!runner) {
      log.info(`Asked to kill unknown executor ${msg.appId}/${msg.execId}`);
      return;
    }
    log.info(`Asked to kill executor ${runner.fullId}`);
    void runner.kill();
  });

  on(LaunchDriver, (msg) => {
    log.info(`Asked to launch driver ${msg.driverId}`);
    if (w.decommission.isDecommissioned) {
      // As an executor's, said rather than left LAUNCHING until the worker leaves.
      log.warn(`Not launching driver ${msg.driverId}: this worker is decommissioning`);
      w.masterConnection.send(
        DriverStateChanged({
          driverId: msg.driverId,
          state: 'ERROR',
          exception: 'Not launched: the worker is decommissioning',
        }),
      );
      return;
    }
    if (w.runners.driver(msg.driverId)) {
      log.warn(`Driver ${msg.driverId} is already running here; ignoring the second launch`);
      return;
    }
    const runner = new DriverRunner(msg.driverId, msg.driverDesc, w, w.workDir, w.clock, (r) =>
      driverFinished(w, r),
    );
    w.runners.addDriver(runner);
    w.resources.reserve(msg.driverDesc.cores, msg.driverDesc.mem);
    void runner.run();
  });

  on(KillDriver, (msg) => {
    log.info(`Asked to kill driver ${msg.driverId}`);
    const runner = w.runners.driver(msg.driverId);
    if (runner) void runner.kill();
    else log.info(`Asked to kill unknown driver ${msg.driverId}`);
  });

  on(RequestWorkerState, () => workerState(w));
}

async function launchExecutor(w: Worker, m: MessageOf<typeof LaunchExecutor>): Promise<void> {
  if (m.masterUrl !== w.masterConnection.activeMasterUrl) {
    log.warn(`Invalid Master (${m.masterUrl}) attempted to launch executor.`);
    return;
  }
  log.info(`Asked to launch executor ${m.appId}/${m.execId} for ${m.appDesc.name}`);
  if (w.decommission.isDecommissioned) {
    // Sent before the master heard that this worker decommissions (SIGPWR): refused, and said
    // so, so that the application's cores are free at once for an executor elsewhere.
    log.warn(`Not launching executor ${m.appId}/${m.execId}: this worker is decommissioning`);
    w.masterConnection.send(
      ExecutorStateChanged({
        appId: m.appId,
        execId: m.execId,
        state: 'KILLED',
        message: 'Not launched: the worker is decommissioning',
      }),
    );
    return;
  }
  const fullId = `${m.appId}/${m.execId}`;
  if (w.runners.executor(fullId)) {
    log.warn(`Executor ${fullId} is already running here; ignoring the second launch`);
    return;
  }
  const resources = m.resources ?? {};
  const refused = w.customResources.take(fullId, resources);
  if (refused !== undefined) {
    log.warn(`Not launching executor ${fullId}: ${refused}`);
    w.masterConnection.send(
      ExecutorStateChanged({
        appId: m.appId,
        execId: m.execId,
        state: 'FAILED',
        message: truncateMessage(`Not launched: ${refused}`),
      }),
    );
    return;
  }
  let dirs: string[];
  try {
    // A confined standby's dirs become the application's, if this is its first executor here.
    dirs = await w.appDirectories.dirsFor(m.appId, () =>
      w.prestart?.handOverLocalDirs(m.appId, m.appDesc.command),
    );
  } catch (err) {
    w.customResources.release(fullId, resources);
    log.error(`Failed to create local dirs for ${m.appId}`, err);
    w.masterConnection.send(
      ExecutorStateChanged({
        appId: m.appId,
        execId: m.execId,
        state: 'FAILED',
        message: truncateMessage(`Failed to create local dirs: ${(err as Error).message}`),
      }),
    );
    return;
  }
  const runner = new ExecutorRunner(
    m.appId,
    m.execId,
    m.appDesc,
    m.cores,
    m.memory,
    w,
    w.workDir,
    dirs,
    (r) => executorStateChanged(w, r),
  );
  runner.resources = resources;
  w.runners.addExecutor(runner);
  w.resources.reserve(m.cores, m.memory);
  await runner.start();
  // A standby handed this application's dirs and not taken by its launch serves nobody else.
  w.prestart?.dropHandedOver(m.appId);
}

/** A runner changed state: tell the master, and free what a finished one held. */
function executorStateChanged(w: Worker, runner: ExecutorRunner): void {
  w.masterConnection.send(
    ExecutorStateChanged({
      appId: runner.appId,
      execId: runner.execId,
      state: runner.state,
      message: cut(runner.message),
      exitStatus: runner.exitCode,
    }),
  );
  w.runners.runnerChanged();
  if (!runner.isFinished) return;
  if (w.runners.executorFinished(runner)) {
    w.resources.release(runner.cores, runner.memory);
    w.customResources.release(runner.fullId, runner.resources);
  }
  // After it left the running ones: a follower asks whether its process is done, so it ends now,
  // not at its re-check.
  w.logFollows.sourceChanged();
  void w.appDirectories.cleanupIfDone(runner.appId);
  w.prestart?.fill();
}

function driverFinished(w: Worker, runner: DriverRunner): void {
  w.masterConnection.send(
    DriverStateChanged({
      driverId: runner.driverId,
      state: runner.state,
      exception: cut(runner.exception),
    }),
  );
  if (w.runners.driverFinished(runner)) {
    w.resources.release(runner.desc.cores, runner.desc.mem);
    w.prestart?.fill();
  }
  w.logFollows.sourceChanged();
  w.runners.runnerChanged();
}

function workerState(w: Worker) {
  const exec = (r: ExecutorRunner) => ({
    appId: r.appId,
    execId: r.execId,
    cores: r.cores,
    memory: r.memory,
    state: r.state,
    ...(r.pid !== undefined && r.pid > 0 ? { pid: r.pid } : {}),
    ...(r.exitCode !== undefined ? { exitCode: r.exitCode } : {}),
    ...(r.message !== undefined ? { message: truncateMessage(r.message) } : {}),
    dir: r.dir,
    app: runnerApp(r.appDesc),
    ...(Object.keys(r.resources).length > 0 ? { resources: r.resources } : {}),
  });
  const driver = (r: DriverRunner) => ({
    driverId: r.driverId,
    cores: r.desc.cores,
    memory: r.desc.mem,
    state: r.state,
    ...(r.pid !== undefined && r.pid > 0 ? { pid: r.pid } : {}),
    ...(r.exitCode !== undefined ? { exitCode: r.exitCode } : {}),
    ...(r.exception !== undefined ? { message: truncateMessage(r.exception) } : {}),
    dir: r.dir,
  });
  const addr = w.rpcEnv.rpcAddress;
  const connection = w.masterConnection;
  return WorkerStateResponse({
    host: addr?.host ?? '',
    port: addr?.port ?? 0,
    workerId: w.workerId,
    masterUrl: connection.activeMasterUrl,
    masterWebUiUrl: connection.activeMasterWebUiUrl,
    cores: w.resources.cores,
    memory: w.resources.memory,
    coresUsed: w.resources.coresUsed,
    memoryUsed: w.resources.memoryUsed,
    workDir: w.workDir,
    ...(w.customResources.isEmpty
      ? {}
      : { resources: w.customResources.all, resourcesUsed: w.customResources.used() }),
    logFollows: w.logFollows.size,
    executors: w.runners.runningExecutors().map(exec),
    finishedExecutors: w.runners.retainedExecutors().map(exec),
    drivers: w.runners.runningDrivers().map(driver),
    finishedDrivers: w.runners.retainedDrivers().map(driver),
  });
}

/** A message for the master cut to the protocol's bound (an exception may be any size). */
function cut(message: string | undefined): string | undefined {
  return message === undefined ? undefined : truncateMessage(message);
}

/** An executor's application as the worker's state shows it (Spark's /json `appdesc`). */
function runnerApp(d: ApplicationDescription) {
  const command = formatCommand(d.command.argv);
  return {
    name: d.name,
    user: d.user,
    ...(d.maxCores !== undefined ? { maxCores: d.maxCores } : {}),
    memoryPerExecutorMB: d.memoryPerExecutorMB,
    ...(d.resourceReqsPerExecutor ? { resourceReqsPerExecutor: d.resourceReqsPerExecutor } : {}),
    command:
      command.length > MAX_APP_COMMAND_QUOTE
        ? `${command.slice(0, MAX_APP_COMMAND_QUOTE - 1)}…`
        : command,
  };
}
