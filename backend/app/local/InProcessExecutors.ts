import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EXECUTOR_DIRS_ENV } from '../../protocol/childEnv.js';
import { wickProtocol } from '../../protocol/index.js';
import { APP_CREDENTIAL_ENV, AppKeyRing, formatCredential } from '../../rpc/credentials.js';
import { RpcEnv } from '../../rpc/index.js';
import { getLogger } from '../../util/log.js';
import { CoarseGrainedExecutorBackend } from '../executor/CoarseGrainedExecutorBackend.js';

const log = getLogger('LocalSchedulerBackend');

/** What the driver needs of its link to the cluster; here there is none (see AppClient). */
export interface InProcessListener {
  /** An executor ended by itself (its connection to the driver dropped, a failed start). */
  executorEnded(executorId: string, reason: string, exitStatus: number): void;
}

/** The application's id and its executors' key, made before the driver's RpcEnv listens. */
export interface LocalApp {
  appId: string;
  /** The key the executors prove, and the only one the driver's RpcEnv lets in. */
  keys: AppKeyRing;
  credential: string;
}

/**
 * A local[N] application's id (Spark's `local-<time>`) and key. The driver's RpcEnv lets in only
 * connections proving that key: its port is open on the loopback, and any process of the machine
 * could otherwise register as an executor and be sent the application's code and data.
 */
export function newLocalApp(now = Date.now()): LocalApp {
  const appId = `local-${now}`;
  const key = randomBytes(32).toString('hex');
  const keys = new AppKeyRing();
  keys.add(appId, key);
  return { appId, keys, credential: formatCredential({ kind: 'app', id: appId, key }) };
}

/**
 * The executors of a local[N] application, inside the driver's process (Spark's local mode runs
 * its executor in the driver's JVM): N executors of one task thread each, each the same
 * CoarseGrainedExecutorBackend a worker would start, on an RpcEnv of its own that dials the
 * driver over the loopback. Tasks go the whole way a cluster's do — shipped functions compiled
 * in a task thread, map outputs served by each executor's shuffle server and fetched by the
 * reduce tasks — so an application gives the same answer, and a debugger attached to the driver
 * reaches its task functions. N executors rather than Spark's one with N threads: a shuffle's
 * blocks then cross from one executor to another, as on a cluster.
 *
 * In place of the master's AppClient: there is no master to register with, tell, or unregister
 * from; the application's id is made here (Spark's `local-<time>`).
 */
export class InProcessExecutors {
  readonly appId: string;
  private readonly envs = new Map<string, RpcEnv>();
  /** @internal Where the executors' files are (read by tests). */
  workDir: string | undefined;
  private readonly removeWorkDir = () => {
    if (this.workDir) rmSync(this.workDir, { recursive: true, force: true });
  };

  constructor(
    private readonly app: LocalApp,
    private readonly threads: number,
    private readonly listener: InProcessListener,
    /** MiB per executor (wick.executor.memory), its task thread's heap. */
    private readonly memoryMB: number | undefined,
  ) {
    this.appId = app.appId;
  }

  /**
   * Starts the executors, which register with the driver at `driverUrl` as a worker's would.
   * Their files (the fetched code, shuffle outputs) go under a temporary folder removed when the
   * process exits, as a worker removes an application's folder when it ends.
   */
  async start(driverUrl: string): Promise<string[]> {
    this.workDir = await mkdtemp(join(tmpdir(), `wick-${this.appId}-`));
    process.once('exit', this.removeWorkDir);
    const ids: string[] = [];
    for (let i = 0; i < this.threads; i++) {
      const id = String(i);
      ids.push(id);
      await this.startExecutor(id, driverUrl, this.workDir);
    }
    log.info(
      `Running ${this.threads} executor(s) inside the driver's process (master local[${this.threads}]), files under ${this.workDir}`,
    );
    return ids;
  }

  private async startExecutor(executorId: string, driverUrl: string, workDir: string) {
    const childEnv: NodeJS.ProcessEnv = {
      [EXECUTOR_DIRS_ENV]: join(workDir, `executor-${executorId}`),
      [APP_CREDENTIAL_ENV]: this.app.credential,
    };
    const env = await RpcEnv.create({
      protocol: wickProtocol,
      name: `wickExecutor${executorId}`,
      clientMode: true,
      unref: true,
      auth: {
        credential: { kind: 'app', id: this.appId, key: this.keyOf() },
        keys: undefined,
      },
    });
    this.envs.set(executorId, env);
    let ended = false;
    let backend: CoarseGrainedExecutorBackend | undefined;
    // In place of the executor process's exit: its RpcEnv and threads end, the driver's do not.
    const exit = (code: number, reason: string) => {
      if (ended) return;
      ended = true;
      (code === 0 ? log.info.bind(log) : log.warn.bind(log))(`Executor ${executorId}: ${reason}`);
      this.envs.delete(executorId);
      void env
        .stop()
        .then(() => backend?.threadsStopped())
        .finally(() => {
          // The last one gone (the driver stopped them): their files go, as a worker's would.
          if (this.envs.size === 0) this.removeWorkDir();
          if (code !== 0) this.listener.executorEnded(executorId, reason, code);
        });
    };
    backend = new CoarseGrainedExecutorBackend({
      driverUrl,
      executorId,
      hostname: '127.0.0.1',
      cores: 1,
      appId: this.appId,
      ...(this.memoryMB !== undefined ? { memoryMB: this.memoryMB } : {}),
      exit,
      env: childEnv,
    });
    env.setupEndpoint(CoarseGrainedExecutorBackend.ENDPOINT_NAME, backend);
  }

  private keyOf(): string {
    return this.app.keys.keyFor('app', this.appId) as string;
  }

  /** Nothing to ask for: the executors are all there from the start. */
  requestTotalExecutors(_total: number): void {}

  /** No master to tell how the application ended: the driver's own output says it. */
  unregister(): void {}

  /** Ends the executors still running (the driver's stop has asked them to; this makes sure). */
  async stop(): Promise<void> {
    await Promise.all([...this.envs.values()].map((e) => e.stop()));
    this.envs.clear();
    this.removeWorkDir();
    process.off('exit', this.removeWorkDir);
  }
}
