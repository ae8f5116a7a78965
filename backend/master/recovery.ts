import { MasterConf } from '../conf/master.js';
import type { RecoveryState } from '../protocol/common.js';
import { MasterChanged } from '../protocol/deploy.js';
import type { WireMessage } from '../protocol/registry.js';
import { deriveKey } from '../rpc/credentials.js';
import type { RpcEndpointRef, RpcEnv } from '../rpc/index.js';
import type { TimerHandle } from '../util/clock.js';
import { getLogger } from '../util/log.js';
import { ApplicationInfo } from './ApplicationInfo.js';
import { DriverInfo } from './DriverInfo.js';
import { CompleteRecovery } from './messages.js';
import { addApplication, removeApplication } from './operations/apps.js';
import type { OperationsContext } from './operations/context.js';
import { relaunchDriver, removeDriver } from './operations/drivers.js';
import { addWorker, removeWorker } from './operations/workers.js';
import type { PersistedToken } from './persistence/PersistenceEngine.js';
import { schedule } from './placement.js';
import { WorkerResourcePool } from './resources/WorkerResourcePool.js';
import { WorkerInfo } from './WorkerInfo.js';

/**
 * Leadership and recovery (Spark's Master.electedLeader / beginRecovery / completeRecovery). A new
 * leader reads the persisted state; if there is any, it is RECOVERING: it tells every persisted
 * worker and application that the master changed and takes back those that answer. When all have
 * answered, or after the worker timeout, it drops the rest and becomes ALIVE. It owns the timer
 * of that timeout.
 */

const log = getLogger('Master');

/** What the recovery needs of its master. */
export interface RecoveryHost {
  readonly ops: OperationsContext;
  readonly rpc: Pick<
    RpcEnv,
    'endpointRef' | 'refOver' | 'connectAs' | 'clusterSecret' | 'isStopped'
  >;
  readonly self: RpcEndpointRef;
  readonly webUiUrl: string;
  /** The master's own state, announced to its subscribers. */
  setStatus(state: RecoveryState): void;
  /** Users' tokens as the recovery store keeps them (tokens/TokenStore.adoptShared). */
  adoptTokens?(tokens: PersistedToken[]): Promise<number> | undefined;
}

export class Recovery {
  private timer: TimerHandle | undefined;

  constructor(private readonly m: RecoveryHost) {}

  async electedLeader(): Promise<void> {
    const m = this.m;
    const c = m.ops;
    const stored = await this.readPersisted();
    if (!stored) return;
    // Before anything is answered as leader: the tokens the last leader made and revoked.
    if (stored.tokens !== undefined) {
      try {
        const taken = await m.adoptTokens?.(stored.tokens);
        log.info(
          `Users' tokens from the recovery store: ${stored.tokens.length}${taken ? `; ${taken} more from this master's tokens file, now kept there too` : ''}`,
        );
      } catch (err) {
        log.warn((err as Error).message);
      }
    }
    const empty =
      stored.apps.length === 0 && stored.drivers.length === 0 && stored.workers.length === 0;
    m.setStatus(empty ? 'ALIVE' : 'RECOVERING');
    log.info(`I have been elected leader! New state: ${c.status}`);
    if (empty) {
      schedule(c);
      return;
    }
    const masterChanged = MasterChanged({ master: m.self.toData(), masterWebUiUrl: m.webUiUrl });
    for (const a of stored.apps) {
      log.info(`Trying to recover app: ${a.id}`);
      const app = new ApplicationInfo(
        a.id,
        a.desc,
        m.rpc.endpointRef(a.driver),
        a.startTime,
        c.conf.get(MasterConf.defaultCores),
        a.submission,
        a.owner,
      );
      if (!addApplication(c, app, 'UNKNOWN')) continue;
      c.cluster.reserveAppId(a.id);
      tellDriver(m, app, masterChanged);
    }
    // A driver relaunched under a new id just before the last master died has both records.
    const replaced = new Set(stored.drivers.flatMap((d) => d.relaunchedFrom ?? []));
    for (const d of stored.drivers) {
      c.cluster.reserveDriverId(d.id);
      if (replaced.has(d.id)) {
        log.info(`Dropping the record of driver ${d.id}: it was relaunched under a new id`);
        await c.persistence.removeDriver(d.id);
        continue;
      }
      // Not waiting: its worker may report it; if none does, completing the recovery decides.
      c.cluster.addDriver(
        new DriverInfo(d.id, d.desc, d.submitDate, d.relaunchedFrom, d.owner),
        false,
      );
    }
    for (const w of stored.workers) {
      log.info(`Trying to recover worker: ${w.id}`);
      const ref = m.rpc.endpointRef(w.endpoint);
      const worker = new WorkerInfo(
        w.id,
        w.host,
        w.port,
        w.cores,
        w.memory,
        ref,
        w.webUiAddress,
        c.clock.now(),
      );
      worker.resources = new WorkerResourcePool(w.resources);
      if (!(await addWorker(c, worker, 'UNKNOWN'))) continue;
      ref.send(masterChanged);
    }
    this.timer = c.clock.setTimeout(() => {
      if (!m.rpc.isStopped) m.self.send(CompleteRecovery({}));
    }, c.workerTimeoutMs);
    await this.completeIfAnswered();
  }

  /** Completes the recovery once every persisted worker and application has answered. */
  async completeIfAnswered(): Promise<void> {
    const c = this.m.ops;
    if (c.status === 'RECOVERING' && !c.cluster.anyUnknown()) await this.complete();
  }

  /** Drops the workers and applications that did not answer, and leads. */
  async complete(): Promise<void> {
    const c = this.m.ops;
    if (c.status !== 'RECOVERING') return;
    this.timer?.cancel();
    this.m.setStatus('COMPLETING_RECOVERY');
    for (const w of c.cluster.allWorkers()) {
      if (w.state === 'UNKNOWN') await removeWorker(c, w, 'Not responding for recovery');
    }
    for (const app of c.cluster.activeApps()) {
      if (app.state === 'UNKNOWN') await removeApplication(c, app, 'FINISHED');
    }
    for (const app of c.cluster.activeApps()) {
      if (app.state === 'WAITING' && app.executors.size > 0) c.cluster.setAppState(app, 'RUNNING');
    }
    for (const driver of c.cluster.activeDrivers()) {
      if (driver.worker) continue;
      if (driver.desc.supervise) {
        await relaunchDriver(c, driver);
      } else {
        await removeDriver(c, driver.id, 'ERROR', undefined);
        log.warn(`Did not re-launch ${driver.id} because it was not supervised`);
      }
    }
    this.m.setStatus('ALIVE');
    schedule(c);
    log.info('Recovery complete - resuming operations!');
  }

  /**
   * Leadership lost (ZooKeeper unreachable, or another master leads): forget the cluster without
   * touching it or the persisted state: the workers, applications and drivers belong to whoever
   * leads now, and if this master leads again it recovers them from the persisted state.
   */
  stepDown(): void {
    this.stop();
    this.m.ops.cluster.clear();
    this.m.setStatus('STANDBY');
  }

  stop(): void {
    this.timer?.cancel();
    this.timer = undefined;
  }

  /** The persisted state, retried while the store fails (ZooKeeper reconnecting); undefined once stopped. */
  private async readPersisted() {
    for (;;) {
      try {
        return await this.m.ops.persistence.readPersistedData();
      } catch (err) {
        if (this.m.rpc.isStopped) return undefined;
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
function tellDriver(m: RecoveryHost, app: ApplicationInfo, message: WireMessage): void {
  const secret = m.rpc.clusterSecret;
  if (secret === undefined) {
    app.driver.send(message);
    return;
  }
  const credential = { kind: 'app' as const, id: app.id, key: deriveKey(secret, 'app', app.id) };
  m.rpc.connectAs(app.driver.address, credential).then(
    (c) => m.rpc.refOver(c, app.driver.name).send(message),
    (err: Error) =>
      log.warn(`Cannot tell the driver of ${app.id} about the new master: ${err.message}`),
  );
}
