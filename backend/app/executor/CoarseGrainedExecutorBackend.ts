import { join } from 'node:path';
import { ShuffleConf } from '../../conf/shuffle.js';
import { WickConf } from '../../conf/WickConf.js';
import { LOG_URL_STDERR_ENV, LOG_URL_STDOUT_ENV } from '../../protocol/childEnv.js';
import { EXECUTOR_ENDPOINT, FILE_SERVER_ENDPOINT } from '../../protocol/endpoints.js';
import {
  AddFiles,
  type AppConfig,
  KillTask,
  LaunchTask,
  RegisterExecutor,
  RetrieveAppConfig,
  StopExecutor,
} from '../../protocol/executor.js';
import type { AnyMessageDef, MessageOf, WireMessage } from '../../protocol/registry.js';
import type { TaskDescription } from '../../protocol/task.js';
import {
  RpcEndpoint,
  type RpcEndpointRef,
  type RpcEnv,
  type RpcSenderContext,
} from '../../rpc/index.js';
import { removeTaskTempFiles, spillDirOf } from '../shuffle/spillFiles.js';
import type { TaskPlace } from '../task/compile.js';
import { AddedFiles } from './AddedFiles.js';
import { Executor } from './Executor.js';
import { executorResourcesFromEnv } from './executorResources.js';
import { appLocalDir, fetchAppCode } from './fetchAppFiles.js';
import { FetchFailedError, shuffleReadsOf } from './fetchShuffleBlocks.js';
import { ReduceFetches } from './ReduceFetches.js';
import { startShuffleServer } from './shuffleServer.js';
import { statusUpdate } from './statusUpdate.js';
import { type TaskPool, takeTaskPool } from './taskPool.js';

export interface BackendOptions {
  driverUrl: string;
  executorId: string;
  hostname: string;
  cores: number;
  appId: string;
  /** Its memory in MiB (wick.executor.memory), shared out between its task threads' heaps. */
  memoryMB?: number;
  /** Called to end the process (Spark's exitExecutor). */
  exit: (code: number, reason: string) => void;
  /** Its task threads; by default the standby's, or new ones (tests pass their own). */
  pool?: TaskPool;
  /**
   * The environment its worker gave it (its local dirs, credential, shuffle service, log URLs):
   * the process's own, except for executors run inside the driver (app/local/), which share one
   * process and so cannot each have their own.
   */
  env?: NodeJS.ProcessEnv;
}

/**
 * The executor process's endpoint (Spark's CoarseGrainedExecutorBackend): fetches the app's
 * configuration from the driver, registers, then runs the tasks the driver launches and reports
 * their status. It exits when the driver says so or its connection to the driver is lost.
 */
export class CoarseGrainedExecutorBackend extends RpcEndpoint {
  static readonly ENDPOINT_NAME = EXECUTOR_ENDPOINT;

  private driver: RpcEndpointRef | undefined;
  private executor: Executor | undefined;
  private pool: TaskPool | undefined;
  private threadsEnded: Promise<void> = Promise.resolve();
  private fileServer: RpcEndpointRef | undefined;
  /** The RpcEnv its shuffle block server listens on (the executor's own env only dials out). */
  private shuffleEnv: RpcEnv | undefined;
  /** Where its tasks' temporary files go (spills, fetches to disk), once it has a shuffle dir. */
  private spillDir: string | undefined;
  private readonly reduceFetches: ReduceFetches;
  /** The added files here, and the tasks waiting for them (set once it has AppConfig). */
  private files: AddedFiles | undefined;

  constructor(private readonly opts: BackendOptions) {
    super();
    this.reduceFetches = new ReduceFetches(opts, () => this.rpcEnv, this.log);
    // The task path: each handler returns at once, so the inbox runs the next message without a
    // promise in between.
    this.on(LaunchTask, (msg) => {
      if (!this.executor) {
        this.opts.exit(1, 'Received LaunchTask command but executor was null');
        return;
      }
      if (shuffleReadsOf(msg.task.source).length > 0) void this.fetchThenLaunch(msg.task);
      else this.launch(msg.task);
    });
    this.on(AddFiles, (msg) => this.files?.add(msg.files));
    this.on(KillTask, (msg) => {
      this.executor?.killTask(msg.taskId, msg.reason, msg.ifNotStarted);
    });
    this.on(StopExecutor, () => {
      // Status reports still held for this turn's write go out before the RpcEnv stops.
      this.executor?.flushReports();
      this.opts.exit(0, 'Driver commanded a shutdown');
    });
  }

  private get env(): NodeJS.ProcessEnv {
    return this.opts.env ?? process.env;
  }

  private launch(task: TaskDescription): void {
    if (!this.executor) return;
    if (this.files) this.files.launch(task);
    else this.executor.launchTask(task);
  }

  /**
   * A reduce task's blocks are fetched before it launches (ReduceFetches). A block that cannot be
   * fetched or verified fails the task with FetchFailed, which the driver answers by recomputing
   * that map output.
   */
  private async fetchThenLaunch(task: TaskDescription): Promise<void> {
    try {
      await this.reduceFetches.fetch(task);
    } catch (err) {
      const e = err as Error;
      this.log.warn(e.message);
      this.driver?.send(
        statusUpdate(this.opts.executorId, {
          taskId: task.taskId,
          state: 'FAILED',
          error: {
            name: 'FetchFailed',
            message: e.message,
            ...(err instanceof FetchFailedError
              ? {
                  fetchFailed: {
                    shuffleId: err.shuffleId,
                    mapId: err.block.mapId,
                    executorId: err.block.executorId,
                  },
                }
              : {}),
          },
        }),
      );
      return;
    }
    this.launch(task);
  }

  /** Tasks come from the driver alone, over the connection this executor dialled to it. */
  override senderProblem(
    def: AnyMessageDef,
    _message: WireMessage,
    sender: RpcSenderContext,
  ): string | undefined {
    const c = sender.connection;
    if (c === undefined || !def.from.includes('driver')) return undefined;
    if (c.direction === 'outbound' && c.peer === this.driver?.address) return undefined;
    return `only the driver ${this.driver?.address ?? '(not connected yet)'} may send it, over the connection this executor dialled`;
  }

  override async onStart(): Promise<void> {
    const o = this.opts;
    // Its threads start while it registers (or were started by a standby): a task launched at
    // registration does not wait for them.
    const pool = o.pool ?? takeTaskPool(o.cores, o.memoryMB);
    this.pool = pool;
    this.log.info(`Connecting to driver: ${o.driverUrl}`);
    try {
      const driver = await this.rpcEnv.setupEndpointRefByURI(o.driverUrl);
      this.driver = driver;
      const config = await driver.ask(RetrieveAppConfig({}));
      const place = await this.fetchApp(config);
      const resources = executorResourcesFromEnv(this.env);
      const reply = await driver.ask(
        RegisterExecutor({
          executorId: o.executorId,
          executor: this.self.toData(),
          hostname: o.hostname,
          cores: o.cores,
          logUrls: {
            ...(this.env[LOG_URL_STDOUT_ENV] ? { stdout: this.env[LOG_URL_STDOUT_ENV] } : {}),
            ...(this.env[LOG_URL_STDERR_ENV] ? { stderr: this.env[LOG_URL_STDERR_ENV] } : {}),
          },
          ...(resources ? { resources } : {}),
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
        place,
        (r) => {
          if (r.state !== 'RUNNING') this.reduceFetches.taskEnded(r.taskId);
          // A task that failed or was killed (its thread ended under it) may have left spills.
          if ((r.state === 'FAILED' || r.state === 'KILLED') && this.spillDir)
            removeTaskTempFiles(this.spillDir, r.taskId);
          driver.send(statusUpdate(o.executorId, r));
        },
        undefined,
        o.memoryMB,
        pool,
        () => driver.flush(),
      );
    } catch (err) {
      o.exit(1, `Cannot register with driver: ${o.driverUrl}: ${(err as Error).message}`);
    }
  }

  /**
   * The application's code and added files, fetched from the driver's file server before the
   * executor registers (Spark's executors fetch jars and files as their first tasks arrive; here
   * registering means ready to run anything the application ships).
   */
  private async fetchApp(config: MessageOf<typeof AppConfig>): Promise<TaskPlace> {
    // Where added files go, even with none yet: the application may add one at any time.
    const conf = new WickConf(config.props);
    const shuffle = await startShuffleServer(this.opts, this.env);
    this.shuffleEnv = shuffle.env;
    const place: TaskPlace = {
      appDir: config.appDir,
      filesDir: join(appLocalDir(this.env), 'files'),
      ...shuffle.place,
      spillThreshold: conf.get(ShuffleConf.spillMemoryThreshold),
    };
    if (place.shuffleDir) this.spillDir = spillDirOf(place.shuffleDir);
    this.reduceFetches.configure(conf.get(ShuffleConf.maxSizeFetchToMem), this.spillDir);
    this.files = new AddedFiles(
      place.filesDir as string,
      () => this.fileServerRef(),
      (task) => this.executor?.launchTask(task),
      (tasks, message) => this.failTasks(tasks, message),
    );
    if (!config.code && !config.files) return place;
    const server = await this.fileServerRef();
    if (config.code)
      place.codeRoot = await fetchAppCode(server, config.code, appLocalDir(this.env));
    if (config.files) await this.files.fetchFirst(config.files);
    return place;
  }

  /**
   * The driver's file server, looked up when first needed: a driver that ships nothing (one
   * written in another language) need not have one.
   */
  private async fileServerRef(): Promise<RpcEndpointRef> {
    this.fileServer ??= await this.rpcEnv.setupEndpointRef(
      this.driver?.address as string,
      FILE_SERVER_ENDPOINT,
    );
    return this.fileServer;
  }

  private failTasks(tasks: readonly TaskDescription[], message: string): void {
    for (const t of tasks) {
      this.driver?.send(
        statusUpdate(this.opts.executorId, {
          taskId: t.taskId,
          state: 'FAILED',
          error: { name: 'Error', message },
        }),
      );
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
    void this.shuffleEnv?.stop();
    if (this.executor) this.threadsEnded = this.executor.stop();
    else if (this.pool) this.threadsEnded = this.pool.destroy();
  }

  /** Resolves once the task threads have ended, after onStop. */
  threadsStopped(): Promise<void> {
    return this.threadsEnded;
  }
}
