import { MasterConf } from '../conf/master.js';
import { MasterChanged } from '../protocol/deploy.js';
import type { WireMessage } from '../protocol/registry.js';
import { deriveKey } from '../rpc/credentials.js';
import type { TimerHandle } from '../util/clock.js';
import { getLogger } from '../util/log.js';
import { ApplicationInfo } from './ApplicationInfo.js';
import { DriverInfo } from './DriverInfo.js';
import { addApplication, removeApplication } from './handlers/apps.js';
import { relaunchDriver, removeDriver } from './handlers/drivers.js';
import { addWorker, removeWorker } from './handlers/workers.js';
import type { Master } from './Master.js';
import { CompleteRecovery } from './messages.js';
import { schedule } from './placement.js';
import { WorkerInfo } from './WorkerInfo.js';

/**
 * Leadership and recovery (Spark's Master.electedLeader / beginRecovery / completeRecovery). A new
 * leader reads the persisted state; if there is any, it is RECOVERING: it tells every persisted
 * worker and application that the master changed and takes back those that answer. When all have
 * answered, or after the worker timeout, it drops the rest and becomes ALIVE. It owns the timer
 * of that timeout.
 */

const log = getLogger('Master');

export class Recovery {
  private timer: TimerHandle | undefined;

  constructor(private readonly m: Master) {}

  async electedLeader(): Promise<void> {
    const m = this.m;
    const stored = await this.readPersisted();
    if (!stored) return;
    const empty =
      stored.apps.length === 0 && stored.drivers.length === 0 && stored.workers.length === 0;
    m.setState(empty ? 'ALIVE' : 'RECOVERING');
    log.info(`I have been elected leader! New state: ${m.state}`);
    if (empty) {
      schedule(m);
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
        a.submission,
      );
      if (!addApplication(m, app)) continue;
      app.state = 'UNKNOWN';
      m.cluster.reserveAppId(a.id);
      tellDriver(m, app, masterChanged);
    }
    for (const d of stored.drivers) {
      const driver = new DriverInfo(d.id, d.desc, d.submitDate);
      m.cluster.addDriver(driver);
      m.cluster.reserveDriverId(d.id);
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
      if (!(await addWorker(m, worker))) continue;
      worker.state = 'UNKNOWN';
      ref.send(masterChanged);
    }
    this.timer = m.clock.setTimeout(() => {
      if (!m.rpcEnv.isStopped) m.self.send(CompleteRecovery({}));
    }, m.workerTimeoutMs);
    await this.completeIfAnswered();
  }

  /** Completes the recovery once every persisted worker and application has answered. */
  async completeIfAnswered(): Promise<void> {
    if (this.m.state === 'RECOVERING' && !this.m.cluster.anyUnknown()) await this.complete();
  }

  /** Drops the workers and applications that did not answer, and leads. */
  async complete(): Promise<void> {
    const m = this.m;
    if (m.state !== 'RECOVERING') return;
    this.timer?.cancel();
    m.setState('COMPLETING_RECOVERY');
    for (const w of m.cluster.allWorkers()) {
      if (w.state === 'UNKNOWN') await removeWorker(m, w, 'Not responding for recovery');
    }
    for (const app of m.cluster.activeApps()) {
      if (app.state === 'UNKNOWN') await removeApplication(m, app, 'FINISHED');
    }
    for (const app of m.cluster.activeApps()) {
      if (app.state === 'WAITING' && app.executors.size > 0) {
        app.state = 'RUNNING';
        m.broadcaster.app(app);
      }
    }
    for (const driver of m.cluster.activeDrivers()) {
      if (driver.worker) continue;
      if (driver.desc.supervise) {
        log.warn(`Re-launching ${driver.id}`);
        relaunchDriver(m, driver);
      } else {
        await removeDriver(m, driver.id, 'ERROR', undefined);
        log.warn(`Did not re-launch ${driver.id} because it was not supervised`);
      }
    }
    m.setState('ALIVE');
    schedule(m);
    log.info('Recovery complete - resuming operations!');
  }

  /**
   * Leadership lost (ZooKeeper unreachable, or another master leads): forget the cluster without
   * touching it or the persisted state: the workers, applications and drivers belong to whoever
   * leads now, and if this master leads again it recovers them from the persisted state.
   */
  stepDown(): void {
    this.stop();
    this.m.cluster.clear();
    this.m.setState('STANDBY');
  }

  stop(): void {
    this.timer?.cancel();
    this.timer = undefined;
  }

  /** The persisted state, retried while the store fails (ZooKeeper reconnecting); undefined once stopped. */
  private async readPersisted() {
    for (;;) {
      try {
        return await this.m.persistence.readPersistedData();
      } catch (err) {
        if (this.m.rpcEnv.isStopped) return undefined;
        log.warn(`Could not read the persisted state (${(err as Error).message}); trying again`);
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }
}

/**
 * MasterChanged to a recovered application's driver, which lets in only connections that prove
 * its application's key: the master derives it and dials with it.
 */
function tellDriver(m: Master, app: ApplicationInfo, message: WireMessage): void {
  const secret = m.rpcEnv.clusterSecret;
  if (secret === undefined) {
    app.driver.send(message);
    return;
  }
  const credential = { kind: 'app' as const, id: app.id, key: deriveKey(secret, 'app', app.id) };
  m.rpcEnv.connectAs(app.driver.address, credential).then(
    (c) => m.rpcEnv.refOver(c, app.driver.name).send(message),
    (err: Error) =>
      log.warn(`Cannot tell the driver of ${app.id} about the new master: ${err.message}`),
  );
}
