import { MasterConf } from '../../conf/master.js';
import {
  ApplicationRemoved,
  ExecutorRegistered,
  ExecutorUpdated,
  MasterChangeAcknowledged,
  RegisterApplication,
  RegisteredApplication,
  RequestExecutors,
  UnregisterApplication,
} from '../../protocol/app.js';
import { MAX_ACTIVE_APPS } from '../../protocol/bounds.js';
import { KillApplicationResponse, RequestKillApplication } from '../../protocol/client.js';
import { type ApplicationState, isExecutorFinished } from '../../protocol/common.js';
import { ApplicationFinished, ExecutorStateChanged, KillExecutor } from '../../protocol/deploy.js';
import type { MessageOf } from '../../protocol/registry.js';
import { deriveKey } from '../../rpc/credentials.js';
import { type RpcSenderContext, refuse } from '../../rpc/index.js';
import { firstLine } from '../../shared/executorFailure.js';
import { getLogger } from '../../util/log.js';
import { ApplicationInfo } from '../ApplicationInfo.js';
import type { ExecutorDesc } from '../ExecutorDesc.js';
import type { HandlerRegistry, Master } from '../Master.js';
import { schedule } from '../placement.js';
import { checkFromDriver, checkFromWorker, holdsKeyOf } from '../senders.js';

/** Applications ↔ Master: registration, executor state, and ending an application. */

const log = getLogger('Master');

export function appHandlers(m: Master, on: HandlerRegistry): void {
  on(RegisterApplication, (msg, sender) => registerApplication(m, msg, sender));
  on(UnregisterApplication, async ({ appId, failure, killed }, sender) => {
    const app = m.cluster.appById(appId);
    if (app) {
      checkFromDriver(app, sender, `UnregisterApplication of ${appId}`);
      if (killed) {
        log.info(
          `Application ${app.id} was killed: ${firstLine(failure?.message ?? 'its driver says so')}`,
        );
        await removeApplication(m, app, 'KILLED');
      } else if (failure) {
        log.warn(`Application ${app.id} failed, its driver says: ${firstLine(failure.message)}`);
        app.failure = failure;
        await removeApplication(m, app, 'FAILED');
      } else {
        log.info(`Received unregister request from application ${app.id}`);
        await removeApplication(m, app, 'FINISHED');
      }
    }
  });
  on(RequestExecutors, ({ appId, requestedTotal }, ctx) => {
    const app = m.cluster.appById(appId);
    if (!app) {
      log.warn(`Ignoring RequestExecutors for unknown application ${appId}`);
      return;
    }
    checkFromDriver(app, ctx, `RequestExecutors of ${appId}`);
    log.info(`Application ${app.id} requests ${requestedTotal} executors in all`);
    app.executorLimit = requestedTotal;
    schedule(m);
  });
  on(ExecutorRegistered, ({ execId }, ctx) => {
    // The application is the one whose driver's connection this is (not a field it chose).
    const app = appOfConnection(m, ctx);
    const exec = app?.executors.get(execId);
    if (!app || !exec) {
      log.warn(
        `Ignoring ExecutorRegistered for executor ${execId} from ${ctx.senderAddress}: ${app ? `application ${app.id} has no such executor` : 'not the driver of an application'}`,
      );
      return;
    }
    exec.registered = true;
    if (app.retryCount > 0)
      log.info(
        `Executor ${exec.fullId} registered with its driver: the ${app.retryCount} executor failure(s) in a row before it no longer count`,
      );
    app.retryCount = 0;
  });
  on(MasterChangeAcknowledged, (msg, sender) => masterChangeAcknowledged(m, msg, sender));
  on(ExecutorStateChanged, (msg, sender) => executorStateChanged(m, msg, sender));
  on(RequestKillApplication, (msg) => killApplication(m, msg));
}

/**
 * The driver's connection closed while its application was still registered: it never said it
 * was done, so it did not end well (Spark calls this FINISHED; docs/protocol.md says why Wick
 * does not). A driver that failed and said so has unregistered already.
 */
export async function driverDisconnected(m: Master, app: ApplicationInfo): Promise<void> {
  // A cluster-mode driver registers with its own submission key: its id is the driver's.
  const driver = app.submission ? m.cluster.findDriver(app.submission) : undefined;
  if (driver?.killRequested) {
    log.info(`The driver ${driver.id} of ${app.id} was killed before it could unregister`);
    await removeApplication(m, app, 'KILLED');
    return;
  }
  const failure = {
    message: `The driver of ${app.id} went away without unregistering its application (it exited or crashed before stop(), or lost its connection to the master)`,
  };
  log.warn(failure.message);
  app.failure = failure;
  await removeApplication(m, app, 'FAILED');
}

/** The active application whose driver registered over the connection `sender` came on. */
function appOfConnection(m: Master, sender: RpcSenderContext): ApplicationInfo | undefined {
  if (!sender.connection) return m.cluster.appByAddress(sender.senderAddress);
  for (const app of m.cluster.activeApps()) if (app.connection === sender.connection) return app;
  return undefined;
}

/** Adds an application to the tables (and the FIFO); false if its driver's address has one. */
export function addApplication(m: Master, app: ApplicationInfo): boolean {
  if (m.cluster.activeAppCount >= MAX_ACTIVE_APPS) {
    log.warn(
      `Not registering application ${app.id} from ${app.driver.address}: ${MAX_ACTIVE_APPS} applications are active, the most the master takes`,
    );
    return false;
  }
  if (!m.cluster.addApp(app)) {
    log.info(`Attempted to re-register application at same address: ${app.driver.address}`);
    return false;
  }
  m.broadcaster.app(app);
  return true;
}

/**
 * An application ends: its executors are killed and every worker told, in `state`. The driver is
 * told (unless it unregistered) with `reason`, else the state's name.
 */
export async function removeApplication(
  m: Master,
  app: ApplicationInfo,
  state: ApplicationState,
  reason?: string,
): Promise<void> {
  if (!m.cluster.finishApp(app)) return;
  log.info(`Removing app ${app.id}`);
  for (const exec of [...app.executors.values()]) killExecutor(m, app, exec);
  app.state = state;
  app.endTime = m.clock.now();
  if (state === 'FAILED' && !app.failure && reason)
    app.failure = { message: reason.slice(0, 4096) };
  if (state !== 'FINISHED') app.driver.send(ApplicationRemoved({ message: reason ?? state }));
  m.broadcaster.app(app);
  await m.persistence.removeApplication(app.id);
  schedule(m);
  for (const w of m.cluster.registeredWorkers()) {
    w.endpoint.send(ApplicationFinished({ id: app.id }));
  }
}

/**
 * The end of an executor whose application has ended: on a clean stop the executors exit on the
 * driver's StopExecutor while the application unregisters, and the master, which killed what it
 * still listed, hears from their workers how they really ended. That end replaces the KILLED the
 * master presumed (the history shows EXITED 0 for a clean stop), except in a KILLED application,
 * whose executors stay KILLED; nothing else follows from it.
 */
function finalStateOfFinishedApp(
  m: Master,
  msg: MessageOf<typeof ExecutorStateChanged>,
  sender: RpcSenderContext,
): boolean {
  const app = m.cluster.completedAppById(msg.appId);
  const exec = app?.removedExecutors.find((e) => e.id === msg.execId);
  if (!app || !exec) return false;
  checkFromWorker(exec.worker, sender, `ExecutorStateChanged of ${exec.fullId}`);
  if (isExecutorFinished(msg.state)) {
    if (app.state === 'KILLED' && msg.state === 'EXITED' && msg.exitStatus === 0) {
      // Its driver, told of the kill, stopped it before the worker's SIGTERM landed: the kill
      // ended it all the same, and "EXITED · exit 0" would read as a clean end.
      exec.setState('KILLED', m.clock.now(), `Killed with application ${app.id}`);
    } else {
      exec.setState(msg.state, m.clock.now(), msg.message, msg.exitStatus);
    }
    m.broadcaster.app(app);
    log.info(
      `Executor ${app.id}/${exec.id} of the finished application ended ${msg.state}${msg.message ? `: ${msg.message}` : ''}`,
    );
  }
  return true;
}

function killExecutor(m: Master, app: ApplicationInfo, exec: ExecutorDesc): void {
  exec.worker.removeExecutor(exec);
  exec.worker.endpoint.send(
    KillExecutor({ masterUrl: m.masterUrl, appId: app.id, execId: exec.id }),
  );
  exec.setState('KILLED', m.clock.now());
  app.removeExecutor(exec);
  m.broadcaster.worker(exec.worker);
}

async function registerApplication(
  m: Master,
  msg: MessageOf<typeof RegisterApplication>,
  sender: RpcSenderContext,
): Promise<void> {
  if (m.state === 'STANDBY') return;
  const principal = sender.connection?.principal;
  if (principal?.kind === 'app') {
    throw refuse(
      'RegisterApplication',
      "an application's key opens that application alone; a new one is registered with a submission's key or the cluster secret",
    );
  }
  const driver = sender.connection
    ? m.rpcEnv.refOver(sender.connection, msg.driver.name)
    : m.rpcEnv.endpointRef(msg.driver);
  log.info(`Registering app ${msg.appDescription.name}`);
  const now = m.clock.now();
  const app = new ApplicationInfo(
    m.cluster.nextAppId(now),
    msg.appDescription,
    driver,
    now,
    m.conf.get(MasterConf.defaultCores),
    principal?.kind === 'submission' ? principal.id : undefined,
  );
  app.connection = sender.connection;
  if (!addApplication(m, app)) return;
  log.info(`Registered app ${msg.appDescription.name} with ID ${app.id}`);
  await m.persistence.addApplication({
    id: app.id,
    desc: app.desc,
    driver: driver.toData(),
    startTime: app.startTime,
    submission: app.submission,
  });
  const secret = m.rpcEnv.clusterSecret;
  driver.send(
    RegisteredApplication({
      appId: app.id,
      master: m.self.toData(),
      appKey: secret === undefined ? undefined : deriveKey(secret, 'app', app.id),
    }),
  );
  schedule(m);
}

async function masterChangeAcknowledged(
  m: Master,
  { appId }: MessageOf<typeof MasterChangeAcknowledged>,
  sender: RpcSenderContext,
): Promise<void> {
  const app = m.cluster.appById(appId);
  if (app) {
    if (!holdsKeyOf(app, sender)) {
      throw refuse(
        `MasterChangeAcknowledged of ${appId}`,
        "only that application's driver may send it (it proves the key the application registered with)",
      );
    }
    if (sender.connection) {
      app.connection = sender.connection;
      app.driver = m.rpcEnv.refOver(sender.connection, app.driver.name);
    }
    log.info(`Application has been re-registered: ${appId}`);
    app.state = 'WAITING';
    m.broadcaster.app(app);
  } else {
    log.warn(`Master change ack from unknown app: ${appId}`);
  }
  await m.recovery.completeIfAnswered();
}

async function executorStateChanged(
  m: Master,
  msg: MessageOf<typeof ExecutorStateChanged>,
  sender: RpcSenderContext,
): Promise<void> {
  const app = m.cluster.appById(msg.appId);
  const exec = app?.executors.get(msg.execId);
  if (!app || !exec) {
    if (!finalStateOfFinishedApp(m, msg, sender)) {
      log.warn(`Got status update for unknown executor ${msg.appId}/${msg.execId}`);
    }
    return;
  }
  checkFromWorker(exec.worker, sender, `ExecutorStateChanged of ${exec.fullId}`);
  // The executor keeps the first line; the end of its stderr, if quoted, goes to the app.
  exec.setState(
    msg.state,
    m.clock.now(),
    msg.message === undefined ? undefined : firstLine(msg.message),
    msg.exitStatus,
  );
  if (msg.state === 'EXITED' && msg.exitStatus !== 0 && msg.message)
    app.executorFailed(exec, msg.message, m.clock.now());
  app.driver.send(
    ExecutorUpdated({
      id: msg.execId,
      state: msg.state,
      message: msg.message,
      exitStatus: msg.exitStatus,
      workerLost: false,
    }),
  );
  m.broadcaster.app(app);
  if (isExecutorFinished(msg.state)) {
    log.info(`Removing executor ${exec.fullId} because it is ${msg.state}`);
    app.removeExecutor(exec);
    exec.worker.removeExecutor(exec);
    m.broadcaster.worker(exec.worker);
    if (await countExecutorFailure(m, app, exec, msg)) return;
  }
  schedule(m);
}

/**
 * wick.deploy.maxExecutorRetries. Spark resets the count when an executor reports RUNNING, but
 * RUNNING only means that its process started: executors that start and die before they reach
 * their driver (they cannot connect to it, or cannot authenticate) were relaunched for ever,
 * hundreds a minute, each RUNNING resetting the count. Here only an executor that registered with
 * its driver (ExecutorRegistered) resets it; one that ends before that is a failure whatever its
 * exit code, and failures count for the application across its workers. Once the count reaches
 * the limit with no executor registered, the application FAILS. True if it was removed.
 */
async function countExecutorFailure(
  m: Master,
  app: ApplicationInfo,
  exec: ExecutorDesc,
  msg: MessageOf<typeof ExecutorStateChanged>,
): Promise<boolean> {
  if (msg.exitStatus === 0 && exec.registered) return false;
  const count = ++app.retryCount;
  const max = m.conf.get(MasterConf.maxExecutorRetries);
  const limit = max < 0 ? 'no limit' : `limit ${max}`;
  log.info(
    `Executor ${exec.fullId} ${exec.registered ? 'failed' : 'ended before registering with its driver'}: executor failure ${count} in a row of application ${app.id} (wick.deploy.maxExecutorRetries, ${limit})`,
  );
  if (max < 0 || count < max) return false;
  if ([...app.executors.values()].some((e) => e.registered)) return false;
  const last =
    app.lastExecutorFailure?.execId === exec.id
      ? app.lastExecutorFailure.message
      : (msg.message ?? `${msg.state}`);
  const reason = `${count} executor failures in a row with none registered with the driver (wick.deploy.maxExecutorRetries = ${max}); the last, executor ${exec.id} on ${exec.worker.hostPort}: ${last}`;
  log.error(`Application ${app.desc.name} with ID ${app.id} failed: ${reason}`);
  await removeApplication(m, app, 'FAILED', `FAILED: ${reason}`.slice(0, 8192));
  return true;
}

async function killApplication(m: Master, { appId }: MessageOf<typeof RequestKillApplication>) {
  if (m.state !== 'ALIVE') {
    return KillApplicationResponse({
      appId,
      success: false,
      message: `Current state is not alive: ${m.state}. Can only kill applications in ALIVE state.`,
    });
  }
  const app = m.cluster.appById(appId);
  if (!app) {
    return KillApplicationResponse({
      appId,
      success: false,
      message: `Application ${appId} has already finished or does not exist`,
    });
  }
  log.info(`Asked to kill application ${appId}`);
  await removeApplication(m, app, 'KILLED');
  return KillApplicationResponse({ appId, success: true, message: `Killed application ${appId}` });
}
