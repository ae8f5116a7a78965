import { MAX_ACTIVE_DRIVERS } from '../../protocol/bounds.js';
import {
  DriverStatusResponse,
  KillDriverResponse,
  RequestDriverStatus,
  RequestKillDriver,
  RequestSubmitDriver,
  SubmitDriverResponse,
} from '../../protocol/client.js';
import { type DriverState, isDriverFinished } from '../../protocol/common.js';
import { DriverStateChanged, KillDriver } from '../../protocol/deploy.js';
import type { MessageOf } from '../../protocol/registry.js';
import { type RpcSenderContext, refuse } from '../../rpc/index.js';
import { getLogger } from '../../util/log.js';
import { DriverInfo } from '../DriverInfo.js';
import type { HandlerRegistry, Master } from '../Master.js';
import { schedule } from '../placement.js';
import { isWorkersConnection } from '../senders.js';
import { removeUnusedFiles } from './files.js';

/** Drivers in cluster deploy mode: submit, kill, status, and their state from workers. */

const log = getLogger('Master');

const notAlive = (m: Master, what: string) =>
  `Current state is not alive: ${m.state}. Can only ${what} in ALIVE state.`;

export function driverHandlers(m: Master, on: HandlerRegistry): void {
  on(DriverStateChanged, (msg, sender) => driverStateChanged(m, msg, sender));
  on(RequestSubmitDriver, (msg) => submitDriver(m, msg));
  on(RequestKillDriver, (msg) => killDriver(m, msg));
  on(RequestDriverStatus, (msg) => driverStatus(m, msg));
}

/**
 * A supervised driver whose worker was lost (or did not come back to a recovering master) runs
 * again, under a new id, as Spark's does since SPARK-19900: the old run may still be alive behind
 * a partition, and when its worker comes back the master, which no longer knows that id, has it
 * killed (WorkerLatestState); the worker's KILLED for the old id then ends nothing. Under the same
 * id it ended the relaunched driver, and the submission was lost. The old record ends
 * RELAUNCHING; the new one names it (relaunchedFrom), so that a submit waiting on the old id, a
 * kill and a log lookup find the run that replaced it (shared/driverRuns.ts).
 */
export async function relaunchDriver(m: Master, driver: DriverInfo): Promise<void> {
  const now = m.clock.now();
  const fresh = new DriverInfo(m.cluster.nextDriverId(now), driver.desc, now, driver.id);
  log.info(`Re-launching driver ${driver.id} as ${fresh.id}`);
  // The new record first: a master that dies in between recovers both, and drops the old one.
  await m.persistence.addDriver(fresh.persisted());
  m.cluster.addDriver(fresh);
  m.cluster.enqueueDriver(fresh);
  m.broadcaster.driver(fresh);
  await removeDriver(m, driver.id, 'RELAUNCHING', undefined);
}

/** A driver ended (or can never run): it moves to the completed ones, its resources freed. */
export async function removeDriver(
  m: Master,
  driverId: string,
  finalState: DriverState,
  exception: string | undefined,
): Promise<void> {
  const driver = m.cluster.driverById(driverId);
  if (!driver) {
    log.warn(`Asked to remove unknown driver: ${driverId}`);
    return;
  }
  log.info(`Removing driver: ${driverId}`);
  m.cluster.finishDriver(driver);
  driver.state = finalState;
  driver.exception = exception;
  if (driver.worker) {
    driver.worker.removeDriver(driver);
    m.broadcaster.worker(driver.worker);
  }
  m.broadcaster.driver(driver);
  await m.persistence.removeDriver(driverId);
  schedule(m);
  // Not waited for: the disk work is no reason to hold up the master's next message.
  void removeUnusedFiles(m).catch((err) => log.warn(`Cannot remove unused files: ${err}`));
}

async function driverStateChanged(
  m: Master,
  msg: MessageOf<typeof DriverStateChanged>,
  sender: RpcSenderContext,
): Promise<void> {
  const { driverId, state, exception } = msg;
  const known = m.cluster.driverById(driverId);
  // Only the worker running it: a late report from one it ran on before (lost, then back) must
  // not end it where it runs now.
  if (known && !(known.worker && isWorkersConnection(known.worker, sender))) {
    throw refuse(
      `DriverStateChanged of ${driverId}`,
      known.worker
        ? `only ${known.worker.id}, which runs it, may report it`
        : 'it runs on no worker now (it is waiting to be launched again)',
    );
  }
  if (isDriverFinished(state)) {
    await removeDriver(m, driverId, state, exception);
    return;
  }
  const driver = m.cluster.driverById(driverId);
  if (!driver) {
    log.warn(`Received state ${state} for unknown driver ${driverId}`);
  } else {
    driver.state = state;
    m.broadcaster.driver(driver);
  }
}

async function submitDriver(m: Master, msg: MessageOf<typeof RequestSubmitDriver>) {
  if (m.state !== 'ALIVE') {
    return SubmitDriverResponse({
      master: m.self.toData(),
      success: false,
      message: notAlive(m, 'accept driver submissions'),
    });
  }
  const shipped = msg.driverDescription.shipped;
  if (shipped && !(await m.files?.has(shipped.sha256))) {
    return SubmitDriverResponse({
      master: m.self.toData(),
      success: false,
      message: `This master does not have the application's files (manifest ${shipped.sha256}): upload them first (wick submit does), to every master`,
    });
  }
  if (m.cluster.activeDriverCount >= MAX_ACTIVE_DRIVERS) {
    return SubmitDriverResponse({
      master: m.self.toData(),
      success: false,
      message: `The master has ${m.cluster.activeDriverCount} drivers active, the most it takes (${MAX_ACTIVE_DRIVERS}): submit again once some have ended`,
    });
  }
  const now = m.clock.now();
  const driver = new DriverInfo(m.cluster.nextDriverId(now), msg.driverDescription, now);
  log.info(`Driver submitted ${driver.desc.appPath} as ${driver.id}`);
  await m.persistence.addDriver(driver.persisted());
  m.cluster.addDriver(driver);
  m.cluster.enqueueDriver(driver);
  m.broadcaster.driver(driver);
  schedule(m);
  return SubmitDriverResponse({
    master: m.self.toData(),
    success: true,
    driverId: driver.id,
    message: `Driver successfully submitted as ${driver.id}`,
  });
}

async function killDriver(m: Master, msg: MessageOf<typeof RequestKillDriver>) {
  const { driverId } = msg;
  const base = { master: m.self.toData(), driverId };
  if (m.state !== 'ALIVE')
    return KillDriverResponse({ ...base, success: false, message: notAlive(m, 'kill drivers') });
  // The id a submit printed stays the handle of its latest run.
  const driver = m.cluster.latestRunOf(driverId);
  if (!driver) {
    return KillDriverResponse({
      ...base,
      success: false,
      message: `Driver ${driverId} has already finished or does not exist`,
    });
  }
  const which = driver.id === driverId ? driverId : `${driver.id} (the relaunch of ${driverId})`;
  log.info(`Asked to kill driver ${which}`);
  driver.killRequested = true;
  if (m.cluster.isWaiting(driver)) {
    await removeDriver(m, driver.id, 'KILLED', undefined);
  } else {
    driver.worker?.endpoint.send(KillDriver({ driverId: driver.id }));
  }
  return KillDriverResponse({
    ...base,
    success: true,
    message: `Kill request for ${which} submitted`,
  });
}

function driverStatus(m: Master, msg: MessageOf<typeof RequestDriverStatus>) {
  if (m.state !== 'ALIVE') {
    return DriverStatusResponse({ found: false, exception: notAlive(m, 'request driver status') });
  }
  const driver = m.cluster.findDriver(msg.driverId);
  if (!driver) return DriverStatusResponse({ found: false });
  return DriverStatusResponse({
    found: true,
    state: driver.state,
    workerId: driver.worker?.id,
    workerHostPort: driver.worker?.hostPort,
    exception: driver.exception,
  });
}
