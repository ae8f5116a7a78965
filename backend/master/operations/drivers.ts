import {
  type DriverDescription,
  type DriverState,
  isDriverFinished,
} from '../../protocol/common.js';
import { KillDriver } from '../../protocol/deploy.js';
import { getLogger } from '../../util/log.js';
import { DriverInfo } from '../DriverInfo.js';
import { schedule } from '../placement.js';
import type { OperationsContext } from './context.js';
import { removeUnusedFiles } from './files.js';

/** Drivers in cluster deploy mode: submitted, launched again, killed, and ending. */

const log = getLogger('Master');

/** A driver submitted (RequestSubmitDriver): persisted, then waiting for a worker. */
export async function submitDriver(
  c: OperationsContext,
  desc: DriverDescription,
  /** The user's token that submits it, if one does. */
  owner?: string,
): Promise<DriverInfo> {
  const now = c.clock.now();
  const driver = new DriverInfo(c.cluster.nextDriverId(now), desc, now, undefined, owner);
  log.info(`Driver submitted ${driver.desc.appPath} as ${driver.id}`);
  await c.persistence.addDriver(driver.persisted());
  c.cluster.addDriver(driver, true);
  schedule(c);
  return driver;
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
export async function relaunchDriver(c: OperationsContext, driver: DriverInfo): Promise<void> {
  const now = c.clock.now();
  const fresh = new DriverInfo(
    c.cluster.nextDriverId(now),
    driver.desc,
    now,
    driver.id,
    driver.owner,
  );
  log.info(`Re-launching driver ${driver.id} as ${fresh.id}`);
  // The new record first: a master that dies in between recovers both, and drops the old one.
  await c.persistence.addDriver(fresh.persisted());
  c.cluster.addDriver(fresh, true);
  await removeDriver(c, driver.id, 'RELAUNCHING', undefined);
}

/** A driver ended (or can never run): it moves to the completed ones, its resources freed. */
export async function removeDriver(
  c: OperationsContext,
  driverId: string,
  finalState: DriverState,
  exception: string | undefined,
): Promise<void> {
  const driver = c.cluster.driverById(driverId);
  if (!driver) {
    log.warn(`Asked to remove unknown driver: ${driverId}`);
    return;
  }
  log.info(`Removing driver: ${driverId}`);
  c.cluster.finishDriver(driver, finalState, exception);
  await c.persistence.removeDriver(driverId);
  schedule(c);
  // Not waited for: the disk work is no reason to hold up the master's next message.
  void removeUnusedFiles(c).catch((err) => log.warn(`Cannot remove unused files: ${err}`));
}

/** The worker running a driver reports its state (DriverStateChanged); a final one ends it. */
export async function driverStateChanged(
  c: OperationsContext,
  driverId: string,
  state: DriverState,
  exception: string | undefined,
): Promise<void> {
  if (isDriverFinished(state)) {
    await removeDriver(c, driverId, state, exception);
    return;
  }
  const driver = c.cluster.driverById(driverId);
  if (!driver) log.warn(`Received state ${state} for unknown driver ${driverId}`);
  else c.cluster.setDriverState(driver, state);
}

/**
 * A user kills a driver: one still waiting ends KILLED at once; one running is killed by its
 * worker, which reports how it ended.
 */
export async function killDriver(c: OperationsContext, driver: DriverInfo): Promise<void> {
  driver.killRequested = true;
  if (c.cluster.isWaiting(driver)) {
    await removeDriver(c, driver.id, 'KILLED', undefined);
  } else {
    driver.worker?.endpoint.send(KillDriver({ driverId: driver.id }));
  }
}
