import {
  DriverStatusResponse,
  KillDriverResponse,
  type RequestDriverStatus,
  type RequestKillDriver,
  type RequestSubmitDriver,
  SubmitDriverResponse,
} from '../../protocol/client.js';
import { isDriverFinished } from '../../protocol/common.js';
import { type DriverStateChanged, KillDriver } from '../../protocol/deploy.js';
import type { MessageOf, WireMessage } from '../../protocol/registry.js';
import { getLogger } from '../../util/log.js';
import { DriverInfo } from '../DriverInfo.js';
import { driverId as newDriverId } from '../ids.js';
import type { Master } from '../Master.js';

/** Drivers in cluster deploy mode: submit, kill, status, and their state from workers. */

const log = getLogger('Master');

const notAlive = (m: Master, what: string) =>
  `Current state is not alive: ${m.state}. Can only ${what} in ALIVE state.`;

export async function receive(m: Master, msg: WireMessage): Promise<boolean> {
  if (msg.type !== 'DriverStateChanged') return false;
  const { driverId, state, exception } = msg as MessageOf<typeof DriverStateChanged>;
  if (isDriverFinished(state)) {
    await m.removeDriver(driverId, state, exception);
    return true;
  }
  const driver = m.drivers.get(driverId);
  if (!driver) {
    log.warn(`Received state ${state} for unknown driver ${driverId}`);
  } else {
    driver.state = state;
    m.broadcaster.driver(driver);
  }
  return true;
}

export async function reply(m: Master, msg: WireMessage): Promise<WireMessage | undefined> {
  switch (msg.type) {
    case 'RequestSubmitDriver':
      return submitDriver(m, msg as MessageOf<typeof RequestSubmitDriver>);
    case 'RequestKillDriver':
      return killDriver(m, msg as MessageOf<typeof RequestKillDriver>);
    case 'RequestDriverStatus':
      return driverStatus(m, msg as MessageOf<typeof RequestDriverStatus>);
    default:
      return undefined;
  }
}

async function submitDriver(
  m: Master,
  msg: MessageOf<typeof RequestSubmitDriver>,
): Promise<WireMessage> {
  if (m.state !== 'ALIVE') {
    return SubmitDriverResponse({
      master: m.self.toData(),
      success: false,
      message: notAlive(m, 'accept driver submissions'),
    });
  }
  const now = m.clock.now();
  const driver = new DriverInfo(newDriverId(now, m.nextDriverNumber++), msg.driverDescription, now);
  log.info(`Driver submitted ${driver.desc.appPath} as ${driver.id}`);
  await m.persistence.addDriver({
    id: driver.id,
    desc: driver.desc,
    submitDate: driver.submitDate,
  });
  m.drivers.set(driver.id, driver);
  m.waitingDrivers.push(driver);
  m.broadcaster.driver(driver);
  m.schedule();
  return SubmitDriverResponse({
    master: m.self.toData(),
    success: true,
    driverId: driver.id,
    message: `Driver successfully submitted as ${driver.id}`,
  });
}

async function killDriver(
  m: Master,
  msg: MessageOf<typeof RequestKillDriver>,
): Promise<WireMessage> {
  const { driverId } = msg;
  const base = { master: m.self.toData(), driverId };
  if (m.state !== 'ALIVE')
    return KillDriverResponse({ ...base, success: false, message: notAlive(m, 'kill drivers') });
  const driver = m.drivers.get(driverId);
  if (!driver) {
    return KillDriverResponse({
      ...base,
      success: false,
      message: `Driver ${driverId} has already finished or does not exist`,
    });
  }
  log.info(`Asked to kill driver ${driverId}`);
  if (m.waitingDrivers.includes(driver)) {
    await m.removeDriver(driverId, 'KILLED', undefined);
  } else {
    driver.worker?.endpoint.send(KillDriver({ driverId }));
  }
  return KillDriverResponse({
    ...base,
    success: true,
    message: `Kill request for ${driverId} submitted`,
  });
}

function driverStatus(m: Master, msg: MessageOf<typeof RequestDriverStatus>): WireMessage {
  if (m.state !== 'ALIVE') {
    return DriverStatusResponse({ found: false, exception: notAlive(m, 'request driver status') });
  }
  const driver =
    m.drivers.get(msg.driverId) ?? m.completedDrivers.find((d) => d.id === msg.driverId);
  if (!driver) return DriverStatusResponse({ found: false });
  return DriverStatusResponse({
    found: true,
    state: driver.state,
    workerId: driver.worker?.id,
    workerHostPort: driver.worker?.hostPort,
    exception: driver.exception,
  });
}
