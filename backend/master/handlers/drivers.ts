import { MAX_ACTIVE_DRIVERS } from '../../protocol/bounds.js';
import {
  DriverStatusResponse,
  KillDriverResponse,
  RequestDriverStatus,
  RequestKillDriver,
  RequestSubmitDriver,
  SubmitDriverResponse,
} from '../../protocol/client.js';
import { DriverStateChanged } from '../../protocol/deploy.js';
import type { MessageOf } from '../../protocol/registry.js';
import { type RpcSenderContext, refuse } from '../../rpc/index.js';
import { getLogger } from '../../util/log.js';
import {
  driverStateChanged as changeDriverState,
  killDriver as kill,
  submitDriver as submit,
} from '../operations/drivers.js';
import { isWorkersConnection } from '../senders.js';
import type { HandlerContext, HandlerRegistry } from './context.js';

/** Drivers in cluster deploy mode: submit, kill, status, and their state from workers. */

const log = getLogger('Master');

const notAlive = (m: HandlerContext, what: string) =>
  `Current state is not alive: ${m.status}. Can only ${what} in ALIVE state.`;

export function driverHandlers(m: HandlerContext, on: HandlerRegistry): void {
  on(DriverStateChanged, (msg, sender) => driverStateChanged(m, msg, sender));
  on(RequestSubmitDriver, (msg, sender) => submitDriver(m, msg, sender));
  on(RequestKillDriver, (msg) => killDriver(m, msg));
  on(RequestDriverStatus, (msg) => driverStatus(m, msg));
}

async function driverStateChanged(
  m: HandlerContext,
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
  await changeDriverState(m.ops, driverId, state, exception);
}

async function submitDriver(
  m: HandlerContext,
  msg: MessageOf<typeof RequestSubmitDriver>,
  sender: RpcSenderContext,
) {
  if (m.status !== 'ALIVE') {
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
  // A user's token owns what it submits; the record keeps it (tokens/TokenAccess.ts checks it).
  const principal = sender.connection?.principal;
  const owner = principal?.kind === 'token' ? principal.id : undefined;
  const driver = await submit(m.ops, msg.driverDescription, owner);
  return SubmitDriverResponse({
    master: m.self.toData(),
    success: true,
    driverId: driver.id,
    message: `Driver successfully submitted as ${driver.id}`,
  });
}

async function killDriver(m: HandlerContext, msg: MessageOf<typeof RequestKillDriver>) {
  const { driverId } = msg;
  const base = { master: m.self.toData(), driverId };
  if (m.status !== 'ALIVE')
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
  await kill(m.ops, driver);
  return KillDriverResponse({
    ...base,
    success: true,
    message: `Kill request for ${which} submitted`,
  });
}

function driverStatus(m: HandlerContext, msg: MessageOf<typeof RequestDriverStatus>) {
  if (m.status !== 'ALIVE') {
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
