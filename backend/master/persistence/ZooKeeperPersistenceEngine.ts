import { getLogger } from '../../util/log.js';
import { CreateMode, Exception, isZkError, ZkConnection } from '../zookeeper/ZkConnection.js';
import type {
  PersistedApp,
  PersistedDriver,
  PersistedState,
  PersistedToken,
  PersistedWorker,
  PersistenceEngine,
} from './PersistenceEngine.js';
import { readRecords } from './records.js';

const log = getLogger('ZooKeeperPersistenceEngine');

/**
 * Master state in ZooKeeper (Spark's ZooKeeperPersistenceEngine): one persistent znode per worker,
 * application and driver under `<dir>/master_status` (`worker_<id>`, `app_<id>`, `driver_<id>`),
 * its data the record as JSON. Every master of the cluster shares it; only the leader writes.
 */
export class ZooKeeperPersistenceEngine implements PersistenceEngine {
  private constructor(
    private readonly zk: ZkConnection,
    readonly dir: string,
  ) {}

  static async open(
    url: string,
    baseDir: string,
    sessionTimeoutMs: number,
  ): Promise<ZooKeeperPersistenceEngine> {
    if (!url) {
      throw new Error(
        'wick.deploy.recoveryMode=ZOOKEEPER needs wick.deploy.zookeeper.url: set it to host:port[,host:port...]',
      );
    }
    const dir = `${baseDir.replace(/\/+$/, '')}/master_status`;
    const zk = new ZkConnection(url, sessionTimeoutMs);
    try {
      await zk.waitConnected(Math.max(10_000, sessionTimeoutMs));
      await zk.mkdirp(dir);
    } catch (err) {
      zk.close();
      throw new Error(`Cannot use ZooKeeper at ${url} for recovery: ${(err as Error).message}`);
    }
    log.info(`Persisting recovery state to ZooKeeper ${url} under ${dir}`);
    return new ZooKeeperPersistenceEngine(zk, dir);
  }

  addWorker(worker: PersistedWorker): Promise<void> {
    return this.write(`worker_${worker.id}`, worker);
  }
  removeWorker(id: string): Promise<void> {
    return this.zk.remove(`${this.dir}/worker_${id}`);
  }
  addApplication(app: PersistedApp): Promise<void> {
    return this.write(`app_${app.id}`, app);
  }
  removeApplication(id: string): Promise<void> {
    return this.zk.remove(`${this.dir}/app_${id}`);
  }
  addDriver(driver: PersistedDriver): Promise<void> {
    return this.write(`driver_${driver.id}`, driver);
  }
  removeDriver(id: string): Promise<void> {
    return this.zk.remove(`${this.dir}/driver_${id}`);
  }

  addToken(token: PersistedToken): Promise<void> {
    return this.write(`token_${token.id}`, token);
  }
  removeToken(id: string): Promise<void> {
    return this.zk.remove(`${this.dir}/token_${id}`);
  }

  async readPersistedData(): Promise<PersistedState> {
    return readRecords(
      await this.zk.getChildren(this.dir),
      async (name) => (await this.zk.getData(`${this.dir}/${name}`))?.toString('utf8'),
      (name) => `${this.dir}/${name}`,
      'recovery znode',
      log,
    );
  }

  async close(): Promise<void> {
    this.zk.close();
  }

  private async write(name: string, value: unknown): Promise<void> {
    const path = `${this.dir}/${name}`;
    const data = Buffer.from(JSON.stringify(value));
    try {
      await this.zk.create(path, data, CreateMode.PERSISTENT);
    } catch (err) {
      if (!isZkError(err, Exception.NODE_EXISTS)) throw err;
      await this.zk.setData(path, data);
    }
  }
}
