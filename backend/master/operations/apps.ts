import { MasterConf } from '../../conf/master.js';
import { ApplicationRemoved, ExecutorUpdated } from '../../protocol/app.js';
import { MAX_ACTIVE_APPS } from '../../protocol/bounds.js';
import {
  type AppFailure,
  type ApplicationState,
  isExecutorFinished,
} from '../../protocol/common.js';
import {
  ApplicationFinished,
  type ExecutorStateChanged,
  KillExecutor,
} from '../../protocol/deploy.js';
import type { MessageOf } from '../../protocol/registry.js';
import type { PeerConnection, RpcEndpointRef } from '../../rpc/index.js';
import { firstLine } from '../../shared/executorFailure.js';
import { getLogger } from '../../util/log.js';
import type { ApplicationInfo } from '../ApplicationInfo.js';
import type { ExecutorDesc } from '../ExecutorDesc.js';
import { schedule } from '../placement.js';
import type { OperationsContext } from './context.js';

/** Applications: joining, their executors' states and failures, and ending. */

const log = getLogger('Master');

/**
 * Adds an application to the tables (and the FIFO); false if its driver's address has one, or
 * the master has as many as it takes. UNKNOWN: one recovered from the persisted state.
 */
export function addApplication(
  c: OperationsContext,
  app: ApplicationInfo,
  state: 'WAITING' | 'UNKNOWN' = 'WAITING',
): boolean {
  if (c.cluster.activeAppCount >= MAX_ACTIVE_APPS) {
    log.warn(
      `Not registering application ${app.id} from ${app.driver.address}: ${MAX_ACTIVE_APPS} applications are active, the most it takes`,
    );
    return false;
  }
  if (!c.cluster.addApp(app, state)) {
    log.info(`Attempted to re-register application at same address: ${app.driver.address}`);
    return false;
  }
  return true;
}

/** Tries this many ids past a taken one before giving up claiming (a folder that says no to all). */
const MAX_ID_CLAIMS = 1_000;

/**
 * A new application's id (`app-<now>-<number>`), claimed first where the applications log when
 * the master knows where (OperationsContext.claimAppId): an id another master sharing that dir
 * gave, or a log there already has, is passed over for the next number. A claim that fails (the
 * dir cannot be written) is logged and the id given anyway, as it would be without claims: a
 * registration never fails for it.
 */
export async function newAppId(c: OperationsContext, now: number): Promise<string> {
  let id = c.cluster.nextAppId(now);
  if (!c.claimAppId) return id;
  for (let tries = 1; ; tries++) {
    try {
      if (await c.claimAppId(id)) return id;
    } catch (err) {
      log.warn(`Could not claim the application id ${id}: ${(err as Error).message}`);
      return id;
    }
    if (tries >= MAX_ID_CLAIMS) {
      log.warn(`${tries} application ids were taken in a row; giving ${id} unclaimed`);
      return id;
    }
    id = c.cluster.nextAppId(now);
  }
}

/**
 * An application that registered: added and persisted; false if it may not be. The caller
 * answers its driver, then schedules (so that ExecutorAdded follows RegisteredApplication).
 */
export async function registerApplication(
  c: OperationsContext,
  app: ApplicationInfo,
): Promise<boolean> {
  if (!addApplication(c, app)) return false;
  log.info(`Registered app ${app.desc.name} with ID ${app.id}`);
  c.appStatus.registered(app, c.clock.now());
  await c.persistence.addApplication({
    id: app.id,
    desc: app.desc,
    driver: app.driver.toData(),
    startTime: app.startTime,
    submission: app.submission,
    ...(app.owner !== undefined ? { owner: app.owner } : {}),
  });
  return true;
}

/**
 * An application ends: its executors are killed and every worker told, in `state`. The driver is
 * told (unless it unregistered) with `reason`, else the state's name. FAILED: `failure` is why
 * (else `reason`).
 */
export async function removeApplication(
  c: OperationsContext,
  app: ApplicationInfo,
  state: ApplicationState,
  reason?: string,
  failure?: AppFailure,
): Promise<void> {
  const end = {
    state,
    now: c.clock.now(),
    failure: failure ?? (reason ? { message: reason.slice(0, 4096) } : undefined),
  };
  if (!c.cluster.finishApp(app, end)) return;
  log.info(`Removing app ${app.id}`);
  for (const exec of [...app.executors.values()]) killExecutor(c, app, exec);
  if (state !== 'FINISHED') app.driver.send(ApplicationRemoved({ message: reason ?? state }));
  await c.persistence.removeApplication(app.id);
  schedule(c);
  for (const w of c.cluster.registeredWorkers()) {
    w.endpoint.send(ApplicationFinished({ id: app.id }));
  }
}

function killExecutor(c: OperationsContext, app: ApplicationInfo, exec: ExecutorDesc): void {
  exec.worker.endpoint.send(
    KillExecutor({ masterUrl: c.masterUrl, appId: app.id, execId: exec.id }),
  );
  c.cluster.setExecutorState(app, exec, c.clock.now(), { state: 'KILLED' });
  c.cluster.removeExecutor(app, exec);
}

/** The driver said it is done (UnregisterApplication): killed, failed, or finished. */
export async function applicationUnregistered(
  c: OperationsContext,
  app: ApplicationInfo,
  { killed, failure }: { killed?: boolean; failure?: AppFailure },
): Promise<void> {
  if (killed) {
    log.info(
      `Application ${app.id} was killed: ${firstLine(failure?.message ?? 'its driver says so')}`,
    );
    await removeApplication(c, app, 'KILLED');
  } else if (failure) {
    log.warn(`Application ${app.id} failed, its driver says: ${firstLine(failure.message)}`);
    await removeApplication(c, app, 'FAILED', undefined, failure);
  } else {
    log.info(`Received unregister request from application ${app.id}`);
    await removeApplication(c, app, 'FINISHED');
  }
}

/**
 * The driver's connection closed while its application was still registered: it never said it
 * was done, so it did not end well (Spark calls this FINISHED; docs/protocol.md says why Wick
 * does not). A driver that failed and said so has unregistered already.
 */
export async function driverDisconnected(
  c: OperationsContext,
  app: ApplicationInfo,
): Promise<void> {
  // A cluster-mode driver registers with its own submission key: its id is the driver's.
  const driver = app.submission ? c.cluster.findDriver(app.submission) : undefined;
  if (driver?.killRequested) {
    log.info(`The driver ${driver.id} of ${app.id} was killed before it could unregister`);
    await removeApplication(c, app, 'KILLED');
    return;
  }
  const failure = {
    message: `The driver of ${app.id} went away without unregistering its application (it exited or crashed before stop(), or lost its connection to the master)`,
  };
  log.warn(failure.message);
  await removeApplication(c, app, 'FAILED', undefined, failure);
}

/** A recovered application's driver acknowledged the master change (over `over`, if given). */
export function appReregistered(
  c: OperationsContext,
  app: ApplicationInfo,
  over?: { connection: PeerConnection; driver: RpcEndpointRef },
): void {
  log.info(`Application has been re-registered: ${app.id}`);
  c.cluster.appReregistered(app, over);
}

/** The driver wants `requestedTotal` executors in all (RequestExecutors). */
export function requestExecutors(
  c: OperationsContext,
  app: ApplicationInfo,
  requestedTotal: number,
): void {
  log.info(`Application ${app.id} requests ${requestedTotal} executors in all`);
  app.executorLimit = requestedTotal;
  c.cluster.placementMayChange();
  schedule(c);
}

/** The driver says the executor registered with it: the failures before it no longer count. */
export function executorRegistered(app: ApplicationInfo, exec: ExecutorDesc): void {
  exec.registered = true;
  if (app.retryCount > 0)
    log.info(
      `Executor ${exec.fullId} registered with its driver: the ${app.retryCount} executor failure(s) in a row before it no longer count`,
    );
  app.retryCount = 0;
}

/**
 * An executor of an active application changed state (its worker's ExecutorStateChanged): the
 * driver is told; a finished one frees its worker's cores, and counts as a failure unless it
 * served the driver and exited 0.
 */
export async function executorStateChanged(
  c: OperationsContext,
  app: ApplicationInfo,
  exec: ExecutorDesc,
  msg: MessageOf<typeof ExecutorStateChanged>,
): Promise<void> {
  // The executor keeps the first line; the end of its stderr, if quoted, goes to the app.
  c.cluster.setExecutorState(app, exec, c.clock.now(), {
    state: msg.state,
    message: msg.message === undefined ? undefined : firstLine(msg.message),
    exitStatus: msg.exitStatus,
    failure:
      msg.state === 'EXITED' && msg.exitStatus !== 0 && msg.message ? msg.message : undefined,
  });
  app.driver.send(
    ExecutorUpdated({
      id: msg.execId,
      state: msg.state,
      message: msg.message,
      exitStatus: msg.exitStatus,
      workerLost: false,
    }),
  );
  if (isExecutorFinished(msg.state)) {
    log.info(`Removing executor ${exec.fullId} because it is ${msg.state}`);
    c.cluster.removeExecutor(app, exec);
    if (await countExecutorFailure(c, app, exec, msg)) return;
  }
  schedule(c);
}

/**
 * The end of an executor whose application has ended: on a clean stop the executors exit on the
 * driver's StopExecutor while the application unregisters, and the master, which killed what it
 * still listed, hears from their workers how they really ended. That end replaces the KILLED the
 * master presumed (the history shows EXITED 0 for a clean stop), except in a KILLED application,
 * whose executors stay KILLED; nothing else follows from it.
 */
export function finishedAppExecutorEnded(
  c: OperationsContext,
  app: ApplicationInfo,
  exec: ExecutorDesc,
  msg: MessageOf<typeof ExecutorStateChanged>,
): void {
  if (!isExecutorFinished(msg.state)) return;
  if (app.state === 'KILLED' && msg.state === 'EXITED' && msg.exitStatus === 0) {
    // Its driver, told of the kill, stopped it before the worker's SIGTERM landed: the kill
    // ended it all the same, and "EXITED · exit 0" would read as a clean end.
    c.cluster.setExecutorState(app, exec, c.clock.now(), {
      state: 'KILLED',
      message: `Killed with application ${app.id}`,
    });
  } else {
    c.cluster.setExecutorState(app, exec, c.clock.now(), {
      state: msg.state,
      message: msg.message,
      exitStatus: msg.exitStatus,
    });
  }
  log.info(
    `Executor ${app.id}/${exec.id} of the finished application ended ${msg.state}${msg.message ? `: ${msg.message}` : ''}`,
  );
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
  c: OperationsContext,
  app: ApplicationInfo,
  exec: ExecutorDesc,
  msg: MessageOf<typeof ExecutorStateChanged>,
): Promise<boolean> {
  if (msg.exitStatus === 0 && exec.registered) return false;
  const count = ++app.retryCount;
  const max = c.conf.get(MasterConf.maxExecutorRetries);
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
  await removeApplication(c, app, 'FAILED', `FAILED: ${reason}`.slice(0, 8192));
  return true;
}
