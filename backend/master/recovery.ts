import { MasterChanged } from '../protocol/deploy.js';
import { getLogger } from '../util/log.js';
import { ApplicationInfo } from './ApplicationInfo.js';
import { MasterConf } from './config.js';
import { DriverInfo } from './DriverInfo.js';
import type { Master } from './Master.js';
import { WorkerInfo } from './WorkerInfo.js';

/**
 * Leadership and recovery (Spark's Master.electedLeader / beginRecovery / completeRecovery). A new
 * leader reads the persisted state; if there is any, it is RECOVERING: it tells every persisted
 * worker and application that the master changed and takes back those that answer. When all have
 * answered, or after the worker timeout, it drops the rest and becomes ALIVE.
 */

const log = getLogger('Master');

export async function electedLeader(m: Master): Promise<void> {
  const stored = await readPersisted(m);
  if (!stored) return;
  const empty =
    stored.apps.length === 0 && stored.drivers.length === 0 && stored.workers.length === 0;
  m.setState(empty ? 'ALIVE' : 'RECOVERING');
  log.info(`I have been elected leader! New state: ${m.state}`);
  if (empty) {
    m.schedule();
    return;
  }
  const masterChanged = MasterChanged({ master: m.self.toData(), masterWebUiUrl: m.webUiUrl });
  for (const a of stored.apps) {
    log.info(`Trying to recover app: ${a.id}`);
    const app = new ApplicationInfo(
      a.id,
      a.desc,
      m.rpcEnv.endpointRef(a.driver),
      a.startTime,
      m.conf.get(MasterConf.defaultCores),
    );
    if (!m.registerApplication(app)) continue;
    app.state = 'UNKNOWN';
    bumpCounter(m, 'app', a.id);
    app.driver.send(masterChanged);
  }
  for (const d of stored.drivers) {
    const driver = new DriverInfo(d.id, d.desc, d.submitDate);
    m.drivers.set(d.id, driver);
    bumpCounter(m, 'driver', d.id);
    m.broadcaster.driver(driver);
  }
  for (const w of stored.workers) {
    log.info(`Trying to recover worker: ${w.id}`);
    const ref = m.rpcEnv.endpointRef(w.endpoint);
    const worker = new WorkerInfo(
      w.id,
      w.host,
      w.port,
      w.cores,
      w.memory,
      ref,
      w.webUiAddress,
      m.clock.now(),
    );
    if (!(await m.registerWorker(worker))) continue;
    worker.state = 'UNKNOWN';
    ref.send(masterChanged);
  }
  m.recoveryTimer = m.clock.setTimeout(() => {
    if (!m.rpcEnv.isStopped) m.self.send({ type: 'CompleteRecovery' });
  }, m.workerTimeoutMs);
  if (m.canCompleteRecovery()) await completeRecovery(m);
}

export async function completeRecovery(m: Master): Promise<void> {
  if (m.state !== 'RECOVERING') return;
  m.recoveryTimer?.cancel();
  m.setState('COMPLETING_RECOVERY');
  for (const w of [...m.workers.values()]) {
    if (w.state === 'UNKNOWN') await m.removeWorker(w, 'Not responding for recovery');
  }
  for (const app of [...m.idToApp.values()]) {
    if (app.state === 'UNKNOWN') await m.removeApplication(app, 'FINISHED');
  }
  for (const app of m.idToApp.values()) {
    if (app.state === 'WAITING' && app.executors.size > 0) {
      app.state = 'RUNNING';
      m.broadcaster.app(app);
    }
  }
  for (const driver of [...m.drivers.values()]) {
    if (driver.worker) continue;
    if (driver.desc.supervise) {
      log.warn(`Re-launching ${driver.id}`);
      m.relaunchDriver(driver);
    } else {
      await m.removeDriver(driver.id, 'ERROR', undefined);
      log.warn(`Did not re-launch ${driver.id} because it was not supervised`);
    }
  }
  m.setState('ALIVE');
  m.schedule();
  log.info('Recovery complete - resuming operations!');
}

/**
 * Leadership lost (ZooKeeper unreachable, or another master leads): forget the cluster without
 * touching it or the persisted state: the workers, applications and drivers belong to whoever
 * leads now, and if this master leads again it recovers them from the persisted state.
 */
export function stepDown(m: Master): void {
  m.recoveryTimer?.cancel();
  m.recoveryTimer = undefined;
  for (const id of m.workers.keys()) m.broadcaster.workerRemoved(id);
  for (const a of [...m.idToApp.values(), ...m.completedApps]) m.broadcaster.appRemoved(a.id);
  for (const d of [...m.drivers.values(), ...m.completedDrivers]) {
    m.broadcaster.driverRemoved(d.id);
  }
  m.workers.clear();
  m.idToWorker.clear();
  m.addressToWorker.clear();
  m.idToApp.clear();
  m.addressToApp.clear();
  m.waitingApps.length = 0;
  m.completedApps.length = 0;
  m.drivers.clear();
  m.waitingDrivers.length = 0;
  m.completedDrivers.length = 0;
  m.setState('STANDBY');
}

/** The persisted state, retried while the store fails (ZooKeeper reconnecting); undefined once stopped. */
async function readPersisted(m: Master) {
  for (;;) {
    try {
      return await m.persistence.readPersistedData();
    } catch (err) {
      if (m.rpcEnv.isStopped) return undefined;
      log.warn(`Could not read the persisted state (${(err as Error).message}); trying again`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

/** Keeps new ids after recovered ones of the same second from colliding with them. */
function bumpCounter(m: Master, kind: 'app' | 'driver', id: string): void {
  const n = Number(id.slice(id.lastIndexOf('-') + 1));
  if (!Number.isInteger(n)) return;
  if (kind === 'app') m.nextAppNumber = Math.max(m.nextAppNumber, n + 1);
  else m.nextDriverNumber = Math.max(m.nextDriverNumber, n + 1);
}
