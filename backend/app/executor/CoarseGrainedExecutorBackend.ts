import {
  KillTask,
  LaunchTask,
  RegisterExecutor,
  RetrieveAppConfig,
  StatusUpdate,
  StopExecutor,
} from '../../protocol/executor.js';
import { RpcEndpoint, type RpcEndpointRef } from '../../rpc/index.js';
import { Executor } from './Executor.js';
import { type TaskPool, takeTaskPool } from './taskPool.js';

export interface BackendOptions {
  driverUrl: string;
  executorId: string;
  hostname: string;
  cores: number;
  appId: string;
  /** Called to end the process (Spark's exitExecutor). */
  exit: (code: number, reason: string) => void;
  /** Its task threads; by default the standby's, or new ones (tests pass their own). */
  pool?: TaskPool;
}

/**
 * The executor process's endpoint (Spark's CoarseGrainedExecutorBackend): fetches the app's
 * configuration from the driver, registers, then runs the tasks the driver launches and reports
 * their status. It exits when the driver says so or its connection to the driver is lost.
 */
export class CoarseGrainedExecutorBackend extends RpcEndpoint {
  static readonly ENDPOINT_NAME = 'Executor';

  private driver: RpcEndpointRef | undefined;
  private executor: Executor | undefined;
  private pool: TaskPool | undefined;
  private threadsEnded: Promise<void> = Promise.resolve();

  constructor(private readonly opts: BackendOptions) {
    super();
    // The task path: each handler returns at once, so the inbox runs the next message without a
    // promise in between.
    this.on(LaunchTask, (msg) => {
      if (this.executor) this.executor.launchTask(msg.task);
      else this.opts.exit(1, 'Received LaunchTask command but executor was null');
    });
    this.on(KillTask, (msg) => {
      this.executor?.killTask(msg.taskId, msg.reason, msg.ifNotStarted);
    });
    this.on(StopExecutor, () => {
      // Status reports still held for this turn's write go out before the RpcEnv stops.
      this.executor?.flushReports();
      this.opts.exit(0, 'Driver commanded a shutdown');
    });
  }

  override async onStart(): Promise<void> {
    const o = this.opts;
    // Its threads start while it registers (or were started by a standby): a task launched at
    // registration does not wait for them.
    const pool = o.pool ?? takeTaskPool(o.cores);
    this.pool = pool;
    this.log.info(`Connecting to driver: ${o.driverUrl}`);
    try {
      const driver = await this.rpcEnv.setupEndpointRefByURI(o.driverUrl);
      this.driver = driver;
      const config = await driver.ask(RetrieveAppConfig({}));
      const reply = await driver.ask(
        RegisterExecutor({
          executorId: o.executorId,
          executor: this.self.toData(),
          hostname: o.hostname,
          cores: o.cores,
          logUrls: {
            ...(process.env.WICK_LOG_URL_STDOUT ? { stdout: process.env.WICK_LOG_URL_STDOUT } : {}),
            ...(process.env.WICK_LOG_URL_STDERR ? { stderr: process.env.WICK_LOG_URL_STDERR } : {}),
          },
        }),
      );
      if (reply.type !== 'RegisteredExecutor') {
        o.exit(1, `Slave registration failed: ${String(reply.message ?? reply.type)}`);
        return;
      }
      this.log.info('Successfully registered with driver');
      this.executor = new Executor(
        o.executorId,
        o.cores,
        config.appDir,
        (r) => driver.send(StatusUpdate({ executorId: o.executorId, ...r })),
        undefined,
        pool,
      );
    } catch (err) {
      o.exit(1, `Cannot register with driver: ${o.driverUrl}: ${(err as Error).message}`);
    }
  }

  override onDisconnected(address: string): void {
    if (this.driver && address === this.driver.address) {
      this.opts.exit(1, `Driver ${address} disassociated! Shutting down.`);
    }
  }

  /**
   * Begins ending the task threads and returns without waiting for them, so that the RpcEnv closes
   * this executor's connections at once: a driver's stop() waits for its executors' connections to
   * close, and ending a task thread (freeing its heap) takes milliseconds. The status reports still held
   * are written first (Executor.stop flushes them before it waits). The process waits for
   * threadsStopped() before it exits.
   */
  override onStop(): void {
    if (this.executor) this.threadsEnded = this.executor.stop();
    else if (this.pool) this.threadsEnded = this.pool.destroy();
  }

  /** Resolves once the task threads have ended, after onStop. */
  threadsStopped(): Promise<void> {
    return this.threadsEnded;
  }
}
