import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { ShuffleConf } from '../../conf/shuffle.js';
import { WickConf } from '../../conf/WickConf.js';
import {
  LOG_URL_STDERR_ENV,
  LOG_URL_STDOUT_ENV,
  SHUFFLE_SERVICE_ADDRESS_ENV,
} from '../../protocol/childEnv.js';
import { EXECUTOR_ENDPOINT, FILE_SERVER_ENDPOINT } from '../../protocol/endpoints.js';
import {
  AddFiles,
  type AppConfig,
  boundedTaskError,
  KillTask,
  LaunchTask,
  RegisterExecutor,
  RetrieveAppConfig,
  StatusUpdate,
  StopExecutor,
  type TaskDescription,
} from '../../protocol/executor.js';
import { wickProtocol } from '../../protocol/index.js';
import type { AnyMessageDef, MessageOf, WireMessage } from '../../protocol/registry.js';
import { SHUFFLE_ENDPOINT } from '../../protocol/shuffle.js';
import { APP_CREDENTIAL_ENV, AppKeyRing, parseCredential } from '../../rpc/credentials.js';
import {
  RpcEndpoint,
  type RpcEndpointRef,
  RpcEnv,
  RpcError,
  RpcErrorCode,
  type RpcSenderContext,
} from '../../rpc/index.js';
import { ShuffleBlockServer } from '../../shuffle/ShuffleBlockServer.js';
import { removeTaskTempFiles, spillDirOf, tempFile } from '../shuffle/spillFiles.js';
import type { TaskPlace } from '../task/compile.js';
import type { TaskWithBlocks } from '../task/runTask.js';
import type { ShuffleInput } from '../task/shuffleRead.js';
import { Executor } from './Executor.js';
import { appLocalDir, fetchAddedFiles, fetchAppCode } from './fetchAppFiles.js';
import {
  FetchFailedError,
  fetchPlanLine,
  fetchShuffleBlocks,
  fetchShuffleBlocksToFile,
  shuffleReadsOf,
} from './fetchShuffleBlocks.js';
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
  /**
   * Reduce tasks that may hold fetched blocks at once (fetching, queued or running): a task's
   * blocks are in memory until it ends, and the driver queues more tasks than cores (prefetch),
   * so without a bound the queue alone could hold a whole shuffle.
   */
  private readonly reduceSlots = {
    free: 0,
    waiting: [] as (() => void)[],
    held: new Set<number>(),
  };
  private filesDir: string | undefined;
  /** The app's shuffle memory settings (AppConfig) and where its tasks' temporary files go. */
  private readonly shuffle = {
    maxSizeFetchToMem: ShuffleConf.maxSizeFetchToMem.defaultValue,
    spillDir: undefined as string | undefined,
    /** Bytes of blocks fetched into memory for reduce tasks that have not ended. */
    inMemory: 0,
  };
  /** Reduce tasks whose blocks are in memory, and their bytes. */
  private readonly fetchedToMemory = new Map<number, number>();
  /** Reduce tasks whose blocks were fetched to a file, deleted as the task ends. */
  private readonly fetchedFiles = new Map<number, string[]>();
  /**
   * Added files: the names of those here (a task says how many of the driver's it needs: names
   * are never reused, so the count of distinct names here is what it compares with), and the
   * tasks waiting for more. The driver may name a file twice (in AppConfig and again when this
   * executor registers), so it is counted by name, never by message.
   */
  private files = {
    have: new Set<string>(),
    held: [] as TaskDescription[],
    chain: Promise.resolve(),
    /** Why the last fetch failed: a task that needs more files fails at once, rather than wait. */
    failure: undefined as string | undefined,
  };

  constructor(private readonly opts: BackendOptions) {
    super();
    this.reduceSlots.free = opts.cores + 1;
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
    this.on(AddFiles, (msg) => this.addFiles(msg.files));
    this.on(KillTask, (msg) => {
      this.executor?.killTask(msg.taskId, msg.reason, msg.ifNotStarted);
    });
    this.on(StopExecutor, () => {
      // Status reports still held for this turn's write go out before the RpcEnv stops.
      this.executor?.flushReports();
      this.opts.exit(0, 'Driver commanded a shutdown');
    });
  }

  private launch(task: TaskDescription): void {
    if (!this.executor) return;
    if ((task.files ?? 0) <= this.files.have.size) this.executor.launchTask(task);
    else if (this.files.failure) this.failTasks([task], this.files.failure);
    else this.files.held.push(task);
  }

  /**
   * A reduce task's blocks are fetched here, in the executor's main thread, which has the RpcEnv,
   * and go to the task thread with the task: in memory while the executor's reduce tasks hold no
   * more than wick.reducer.maxSizeFetchToMem in all, else in a file the task reads in chunks. A
   * block that cannot be fetched or verified fails the task with FetchFailed, which the driver
   * answers by recomputing that map output.
   */
  private async fetchThenLaunch(task: TaskDescription): Promise<void> {
    await this.takeReduceSlot(task.taskId);
    const t = task as TaskWithBlocks;
    try {
      const started = performance.now();
      const inputs: ShuffleInput[] = [];
      const read = { local: 0, total: 0, toDisk: 0 };
      // A coalesced partition's shuffle parts, one after another, as the task reads them.
      for (const src of shuffleReadsOf(task.source)) {
        this.log.info(fetchPlanLine(src, this.opts.executorId));
        inputs.push(await this.fetchRead(task.taskId, src, read));
      }
      t.shuffleInputs = inputs;
      t.fetchMetrics = {
        localBytesRead: read.local,
        remoteBytesRead: read.total - read.local,
        remoteBytesReadToDisk: read.toDisk,
        recordsRead: 0,
        fetchWaitTimeMs: performance.now() - started,
      };
    } catch (err) {
      const e = err as Error;
      this.log.warn(e.message);
      this.reduceTaskEnded(task.taskId);
      this.driver?.send(
        StatusUpdate({
          executorId: this.opts.executorId,
          taskId: task.taskId,
          state: 'FAILED',
          error: boundedTaskError({
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
          }),
        }),
      );
      return;
    }
    this.launch(task);
  }

  /**
   * One shuffle read of a task: in memory, or to a file when it would take the executor's
   * in-memory fetches past wick.reducer.maxSizeFetchToMem (the task reads it in chunks).
   */
  private async fetchRead(
    taskId: number,
    src: ReturnType<typeof shuffleReadsOf>[number],
    read: { local: number; total: number; toDisk: number },
  ): Promise<ShuffleInput> {
    let local = 0;
    let total = 0;
    for (const b of src.blocks) {
      total += b.size;
      if (b.executorId === this.opts.executorId) local += b.size;
    }
    read.local += local;
    read.total += total;
    const toDisk =
      this.shuffle.inMemory + total > this.shuffle.maxSizeFetchToMem &&
      this.shuffle.spillDir !== undefined;
    if (!toDisk) {
      this.shuffle.inMemory += total;
      this.fetchedToMemory.set(taskId, (this.fetchedToMemory.get(taskId) ?? 0) + total);
      return {
        blocks: await fetchShuffleBlocks(this.rpcEnv, src.shuffleId, src.reduceId, src.blocks, {
          appId: this.opts.appId,
        }),
      };
    }
    read.toDisk += total - local;
    const path = tempFile(this.shuffle.spillDir as string, 'fetch', taskId);
    this.fetchedFiles.set(taskId, [...(this.fetchedFiles.get(taskId) ?? []), path]);
    await fetchShuffleBlocksToFile(this.rpcEnv, src.shuffleId, src.reduceId, src.blocks, path, {
      appId: this.opts.appId,
    });
    return { file: path, bytes: total };
  }

  private takeReduceSlot(taskId: number): Promise<void> {
    const slots = this.reduceSlots;
    const take = () => {
      slots.free--;
      slots.held.add(taskId);
      // What shows the bound holds (test/app/spill.test.ts reads it).
      this.log.info(
        `Reduce task TID ${taskId} may hold fetched blocks: ${slots.held.size} of ${this.opts.cores + 1} reduce slots taken`,
      );
    };
    if (slots.free > 0) {
      take();
      return Promise.resolve();
    }
    this.log.info(
      `Reduce task TID ${taskId} waits for a reduce slot: ${slots.held.size} of ${this.opts.cores + 1} taken`,
    );
    return new Promise((resolve) =>
      slots.waiting.push(() => {
        take();
        resolve();
      }),
    );
  }

  private reduceTaskEnded(taskId: number): void {
    const slots = this.reduceSlots;
    if (!slots.held.delete(taskId)) return;
    const bytes = this.fetchedToMemory.get(taskId);
    if (bytes !== undefined) {
      this.fetchedToMemory.delete(taskId);
      this.shuffle.inMemory -= bytes;
    }
    const fetched = this.fetchedFiles.get(taskId);
    if (fetched) {
      this.fetchedFiles.delete(taskId);
      for (const path of fetched) void rm(path, { force: true });
    }
    slots.free++;
    slots.waiting.shift()?.();
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
      const reply = await driver.ask(
        RegisterExecutor({
          executorId: o.executorId,
          executor: this.self.toData(),
          hostname: o.hostname,
          cores: o.cores,
          logUrls: {
            ...(process.env[LOG_URL_STDOUT_ENV] ? { stdout: process.env[LOG_URL_STDOUT_ENV] } : {}),
            ...(process.env[LOG_URL_STDERR_ENV] ? { stderr: process.env[LOG_URL_STDERR_ENV] } : {}),
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
        place,
        (r) => {
          if (r.state !== 'RUNNING') this.reduceTaskEnded(r.taskId);
          // A task that failed or was killed (its thread ended under it) may have left spills.
          if ((r.state === 'FAILED' || r.state === 'KILLED') && this.shuffle.spillDir)
            removeTaskTempFiles(this.shuffle.spillDir, r.taskId);
          driver.send(
            StatusUpdate({
              executorId: o.executorId,
              ...r,
              ...(r.error ? { error: boundedTaskError(r.error) } : {}),
            }),
          );
        },
        undefined,
        o.memoryMB,
        pool,
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
    const place: TaskPlace = {
      appDir: config.appDir,
      filesDir: join(appLocalDir(), 'files'),
      ...(await this.startShuffleServer()),
      spillThreshold: conf.get(ShuffleConf.spillMemoryThreshold),
    };
    this.shuffle.maxSizeFetchToMem = conf.get(ShuffleConf.maxSizeFetchToMem);
    if (place.shuffleDir) this.shuffle.spillDir = spillDirOf(place.shuffleDir);
    this.filesDir = place.filesDir;
    if (!config.code && !config.files) return place;
    const server = await this.fileServerRef();
    if (config.code) place.codeRoot = await fetchAppCode(server, config.code);
    if (config.files) {
      await fetchAddedFiles(server, config.files, place.filesDir as string);
      for (const f of config.files) this.files.have.add(f.path);
    }
    return place;
  }

  /**
   * Where this executor's map outputs are served from. With the worker's shuffle service
   * (WICK_SHUFFLE_SERVICE_ADDRESS, wick.shuffle.service.enabled), the worker serves them, so they
   * outlive this process, and the executor listens on nothing. Otherwise its own shuffle block
   * server, on an RpcEnv of its own that listens (the executor's dials out only) and lets in only
   * the application's key, as the driver's does. Either way the files live in a folder of the
   * application's local dir, which the worker removes when the application ends.
   */
  private async startShuffleServer(): Promise<Partial<TaskPlace>> {
    const shuffleDir = join(appLocalDir(), `blockmgr-${this.opts.executorId}`);
    const service = process.env[SHUFFLE_SERVICE_ADDRESS_ENV];
    if (service) {
      return {
        shuffleDir,
        shuffleLocation: service,
        shuffleService: true,
        executorId: this.opts.executorId,
      };
    }
    const handed = process.env[APP_CREDENTIAL_ENV];
    const credential = handed ? parseCredential(handed) : undefined;
    let keys: AppKeyRing | undefined;
    if (credential?.kind === 'app') {
      keys = new AppKeyRing();
      keys.add(credential.id, credential.key);
    }
    const env = await RpcEnv.create({
      protocol: wickProtocol,
      name: 'wickShuffle',
      host: '0.0.0.0',
      advertiseHost: this.opts.hostname,
      auth: { credential, keys },
    });
    this.shuffleEnv = env;
    const own = this.opts.executorId;
    const where = `executor ${own}`;
    env.setupEndpoint(
      SHUFFLE_ENDPOINT,
      new ShuffleBlockServer((msg) => {
        if (msg.executorId !== undefined && msg.executorId !== own) {
          throw new RpcError(
            RpcErrorCode.ShuffleBlockNotFound,
            `This is executor ${own}'s shuffle server; it has no map outputs of executor ${JSON.stringify(msg.executorId)}`,
          );
        }
        if (msg.appId !== undefined && msg.appId !== this.opts.appId) {
          throw new RpcError(
            RpcErrorCode.ShuffleBlockNotFound,
            `This is a shuffle server of application ${this.opts.appId}; it has no map outputs of ${JSON.stringify(msg.appId)}`,
          );
        }
        return { dir: shuffleDir, where };
      }),
    );
    return { shuffleDir, shuffleLocation: env.address, executorId: own };
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

  /** Files added after AppConfig: fetched in order; the tasks that need them wait. */
  private addFiles(files: MessageOf<typeof AddFiles>['files']): void {
    this.files.chain = this.files.chain.then(async () => {
      try {
        const lacking = files.filter((f) => !this.files.have.has(f.path));
        if (lacking.length > 0) {
          await fetchAddedFiles(await this.fileServerRef(), lacking, this.filesDir as string);
        }
        for (const f of lacking) this.files.have.add(f.path);
        this.files.failure = undefined;
        this.releaseHeld();
      } catch (err) {
        this.files.failure = `Cannot fetch the files the application added: ${(err as Error).message}`;
        const held = this.files.held;
        this.files.held = [];
        this.failTasks(held, this.files.failure);
      }
    });
  }

  private releaseHeld(): void {
    const here = this.files.have.size;
    const ready = this.files.held.filter((t) => (t.files ?? 0) <= here);
    this.files.held = this.files.held.filter((t) => (t.files ?? 0) > here);
    for (const t of ready) this.executor?.launchTask(t);
  }

  private failTasks(tasks: readonly TaskDescription[], message: string): void {
    for (const t of tasks) {
      this.driver?.send(
        StatusUpdate({
          executorId: this.opts.executorId,
          taskId: t.taskId,
          state: 'FAILED',
          error: boundedTaskError({ name: 'Error', message }),
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
