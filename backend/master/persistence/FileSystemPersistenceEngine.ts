import { mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { getLogger } from '../../util/log.js';
import type {
  PersistedApp,
  PersistedDriver,
  PersistedState,
  PersistedToken,
  PersistedWorker,
  PersistenceEngine,
} from './PersistenceEngine.js';
import { readRecords } from './records.js';

const log = getLogger('FileSystemPersistenceEngine');

/**
 * One JSON file per worker, application and driver in the recovery directory (`worker_<id>`,
 * `app_<id>`, `driver_<id>`, as Spark names them). A write goes to a temp file that is fsynced and
 * renamed over the old one, then the directory is fsynced, so a crash leaves the old record or the
 * new one, never half of either.
 */
export class FileSystemPersistenceEngine implements PersistenceEngine {
  private constructor(readonly dir: string) {}

  static async open(dir: string): Promise<FileSystemPersistenceEngine> {
    if (!dir) {
      throw new Error(
        'wick.deploy.recoveryMode=FILESYSTEM needs wick.deploy.recoveryDirectory: set it to a folder the master can write',
      );
    }
    try {
      await mkdir(dir, { recursive: true });
      const probe = join(dir, `.probe-${process.pid}`);
      await (await open(probe, 'w')).close();
      await rm(probe);
    } catch (err) {
      throw new Error(`Cannot use recovery directory ${dir}: ${(err as Error).message}`);
    }
    log.info(`Persisting recovery state to directory: ${dir}`);
    return new FileSystemPersistenceEngine(dir);
  }

  addWorker(worker: PersistedWorker): Promise<void> {
    return this.write(`worker_${worker.id}`, worker);
  }
  removeWorker(id: string): Promise<void> {
    return this.remove(`worker_${id}`);
  }
  addApplication(app: PersistedApp): Promise<void> {
    return this.write(`app_${app.id}`, app);
  }
  removeApplication(id: string): Promise<void> {
    return this.remove(`app_${id}`);
  }
  addDriver(driver: PersistedDriver): Promise<void> {
    return this.write(`driver_${driver.id}`, driver);
  }
  removeDriver(id: string): Promise<void> {
    return this.remove(`driver_${id}`);
  }

  addToken(token: PersistedToken): Promise<void> {
    return this.write(`token_${token.id}`, token);
  }
  removeToken(id: string): Promise<void> {
    return this.remove(`token_${id}`);
  }

  async readPersistedData(): Promise<PersistedState> {
    return readRecords(
      await readdir(this.dir),
      (name) => readFile(join(this.dir, name), 'utf8'),
      (name) => join(this.dir, name),
      'recovery file',
      log,
    );
  }

  async close(): Promise<void> {}

  private async write(name: string, value: unknown): Promise<void> {
    const final = join(this.dir, name);
    const tmp = join(this.dir, `.${name}.tmp`);
    const fh = await open(tmp, 'w');
    try {
      await fh.writeFile(`${JSON.stringify(value)}\n`);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, final);
    await this.syncDir();
  }

  private async remove(name: string): Promise<void> {
    await rm(join(this.dir, name), { force: true });
    await this.syncDir();
  }

  private async syncDir(): Promise<void> {
    const dh = await open(this.dir, 'r');
    try {
      await dh.sync();
    } catch {
      // Some filesystems cannot fsync a directory; the rename is still atomic there.
    } finally {
      await dh.close();
    }
  }
}
