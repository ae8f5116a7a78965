import { statSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { AppConf } from '../../conf/app.js';
import { RpcConf } from '../../conf/rpc.js';
import { WickConf } from '../../conf/WickConf.js';
import { describeFiles } from '../../files/describeFiles.js';
import type { FileServer } from '../../files/FileServer.js';
import { ADDED_FILES_ENV, APP_NAME_ENV, SUBMIT_CONF_ENV } from '../../protocol/childEnv.js';
import type { AppFailure } from '../../protocol/common.js';
import type { ShippedFile } from '../../protocol/files.js';
import type { PartitionAction, PartitionSource } from '../../protocol/task.js';
import type { RpcEnv } from '../../rpc/index.js';
import { parseMasterUrls } from '../../rpc/masterUrls.js';
import { getLogger } from '../../util/log.js';
import { isInProcessMaster } from '../local/localMaster.js';
import { isAddedFileName, setDriverFiles } from '../WickFiles.js';
import { describeFailure, exitFailure } from './appFailure.js';
import { type AssembledDriver, assembleDriver } from './assembleDriver.js';
import type { DriverEndpoint } from './DriverEndpoint.js';
import type { LiveListenerBus } from './LiveListenerBus.js';
import type { WickListener } from './listener.js';
import { RDD } from './RDD.js';
import type { DAGScheduler } from './scheduler/DAGScheduler.js';
import { once, type RddPlan } from './scheduler/plan.js';
import type { StatusTracker } from './status/AppStatusTracker.js';
import { type ApplicationWatch, watchApplication } from './status/watchApplication.js';

import '../../conf/all.js';
import '../../protocol/index.js';

const log = getLogger('WickContext');

export interface WickContextOptions {
  /** wick://host:port (or several, comma-separated); else wick.master, else WICK_MASTER. */
  master?: string;
  /** Else wick.app.name, else WICK_APP_NAME. */
  appName?: string;
  /** wick.* settings; they override what `wick submit` passed. */
  conf?: Record<string, string>;
}

/** How long a job may wait for its first executor before a warning says so (as Spark's). */
const NO_RESOURCES_WARNING_MS = 15_000;

/**
 * The entry point of a Wick application (Spark's SparkContext): connects to the cluster, gets
 * executors, and runs the jobs of the RDDs made from it.
 *
 *   const wc = await WickContext.create({ appName: 'Pi' });
 *   const n = await wc.range(0, 1000, 1, 4).map((x) => x * x).reduce((a, b) => a + b);
 *   await wc.stop();
 */
export class WickContext {
  private stopped = false;
  private readonly addedFiles = new Map<string, string>();
  private activeJobs = 0;
  private keepAlive: NodeJS.Timeout | undefined;
  private readonly onBeforeExit = () => void this.stop();
  private nextShuffleId = 0;
  /** @internal Cuts jobs into stages and keeps the application's shuffle outputs. */
  readonly dagScheduler: DAGScheduler;
  private readonly env: RpcEnv;
  private readonly driver: DriverEndpoint;
  private readonly client: AssembledDriver['client'];
  private readonly fileServer: FileServer;
  /** The driver's events: where the application's listeners hang (assembleDriver.ts). */
  private readonly bus: LiveListenerBus;
  /**
   * The program called process.exit() before stop(): no stop can run now (nothing asynchronous
   * does), but the unregister is one write on an open socket, which goes out at once. Its status
   * says how the application ended; should the write not make it, the master sees the connection
   * drop and ends the application FAILED anyway.
   */
  private readonly onExit = (code: number) => {
    if (this.stopped && !this.verdictPending) return;
    this.stopped = true;
    this.verdictPending = false;
    WickContext.running.delete(this);
    this.client.unregister(code === 0 ? undefined : exitFailure(code), true);
  };
  /**
   * stop() has stopped the executors, but how the application ended is not said yet: that waits
   * for the end of the turn (see end()), and a failure or the process's exit meanwhile decides it.
   */
  private verdictPending = false;
  /** The verdict a plain stop() left open was a failure (see end). */
  private failedAfterStop = false;
  /** How the application failed, for its ApplicationEnd. */
  private failure: string | undefined;
  /** Once stop() has begun: the driver's RpcEnv closed, its application unregistered. */
  private closed: Promise<void> | undefined;
  /** The contexts not stopped yet: what a driver that fails reports its failure through. */
  private static readonly running = new Set<WickContext>();

  /** The status tracker, the progress bar and the event log (status/watchApplication.ts). */
  private readonly watch: ApplicationWatch;

  private constructor(
    readonly conf: WickConf,
    readonly appName: string,
    readonly master: string,
    parts: AssembledDriver,
    watch: ApplicationWatch,
  ) {
    this.watch = watch;
    this.env = parts.env;
    this.driver = parts.driver;
    this.client = parts.client;
    this.fileServer = parts.fileServer;
    this.bus = parts.bus;
    this.dagScheduler = parts.dagScheduler;
    // An application that never calls stop() still unregisters when it has nothing left to do.
    process.once('beforeExit', this.onBeforeExit);
    process.once('exit', this.onExit);
    WickContext.running.add(this);
  }

  /**
   * @internal The driver failed (`err` reached the top of the application, or was uncaught):
   * each running context ends its application FAILED with what `err` says, rather than letting
   * the process exit with the application's connection dropped and nothing said. `killed`: the
   * process got SIGTERM (wick kill, a worker shutting down): the application ends KILLED.
   */
  static async failAll(err: unknown, killed = false): Promise<void> {
    const failure = describeFailure(err);
    await Promise.all([...WickContext.running].map((wc) => wc.end(failure, killed)));
  }

  /**
   * Listens to the application's events (Spark's SparkContext.addSparkListener): each task's
   * end with its metrics. Returns what removes it.
   */
  addListener(listener: WickListener): () => void {
    const offs: (() => void)[] = [];
    const { onJobStart, onJobEnd, onStageSubmitted, onStageCompleted, onTaskStart, onTaskEnd } =
      listener;
    if (onJobStart)
      offs.push(
        this.bus.on('WickListenerJobStart', ({ event: _, ...e }) => onJobStart.call(listener, e)),
      );
    if (onJobEnd)
      offs.push(
        this.bus.on('WickListenerJobEnd', ({ event: _, ...e }) => onJobEnd.call(listener, e)),
      );
    if (onStageSubmitted)
      offs.push(
        this.bus.on('WickListenerStageSubmitted', ({ event: _, ...e }) =>
          onStageSubmitted.call(listener, e),
        ),
      );
    if (onStageCompleted)
      offs.push(
        this.bus.on('WickListenerStageCompleted', ({ event: _, ...e }) =>
          onStageCompleted.call(listener, e),
        ),
      );
    if (onTaskStart)
      offs.push(
        this.bus.on('WickListenerTaskStart', ({ event: _, ...e }) => onTaskStart.call(listener, e)),
      );
    if (onTaskEnd)
      offs.push(
        this.bus.on('WickListenerTaskEnd', ({ event: _, ...e }) => onTaskEnd.call(listener, e)),
      );
    return () => {
      for (const off of offs) off();
    };
  }

  /**
   * The application's jobs and stages as they run (Spark's SparkContext.statusTracker): active
   * job and stage ids, and each one's progress (tasks done, running, failed).
   */
  statusTracker(): StatusTracker {
    return this.watch.tracker;
  }

  /** @internal The event log this application writes (wick.eventLog.enabled), if any. */
  get eventLogPath(): string | undefined {
    return this.watch.eventLog;
  }

  get appId(): string {
    return this.client.appId ?? '';
  }

  static async create(options: WickContextOptions = {}): Promise<WickContext> {
    const conf = new WickConf();
    const submitted = process.env[SUBMIT_CONF_ENV];
    if (submitted) {
      for (const [k, v] of Object.entries(JSON.parse(submitted) as Record<string, string>))
        conf.set(k, v);
    }
    for (const [k, v] of Object.entries(options.conf ?? {})) conf.set(k, v);
    const master = options.master ?? (conf.get(AppConf.master) || process.env.WICK_MASTER || '');
    if (!master) {
      throw new Error(
        'A master URL must be set in your configuration: pass { master }, set wick.master, or run it with wick submit --master URL (or WICK_MASTER)',
      );
    }
    const appName =
      options.appName ?? (conf.get(AppConf.appName) || process.env[APP_NAME_ENV] || '');
    if (!appName) {
      throw new Error(
        'An application name must be set in your configuration: pass { appName } or set wick.app.name',
      );
    }
    conf.set('wick.master', master).set('wick.app.name', appName);
    conf.validate();

    // local[N]: no master; the executors run in this process (app/local/).
    const masters = isInProcessMaster(master) ? [] : parseMasterUrls(master);
    const parts = await assembleDriver(conf, masters, appName);
    try {
      // local[N] has no master: nothing says to log its runs, nobody to report them to.
      const client = 'reportListenerEvents' in parts.client ? parts.client : undefined;
      // A local cluster's master says so: its runs are logged unless the application said not.
      if (client?.eventLogByDefault && !conf.contains(AppConf.eventLogEnabled.key)) {
        conf.set(AppConf.eventLogEnabled.key, 'true');
      }
      const watch = await watchApplication(
        conf,
        parts.bus,
        { appId: parts.client.appId ?? '', appName },
        client
          ? (events, coalesced) =>
              client.reportListenerEvents(events, coalesced, conf.get(RpcConf.askTimeout))
          : undefined,
      );
      const wc = new WickContext(conf, appName, master, parts, watch);
      for (const f of conf.get(AppConf.files).split(',')) if (f.trim()) await wc.addFile(f.trim());
      // A cluster-mode driver's --files, fetched by its worker (worker/fetchDriverApp.ts).
      const fetched = process.env[ADDED_FILES_ENV];
      if (fetched) for (const name of await readdir(fetched)) await wc.addFile(join(fetched, name));
      return wc;
    } catch (err) {
      await parts.env.stop();
      throw err;
    }
  }

  /**
   * Ships a file to every executor (Spark's addFile): a task reads it at WickFiles.get(name),
   * `name` being the path's last part; in the driver, WickFiles.get gives the path added. Adding
   * the same file again does nothing; another file under a name already added is refused.
   */
  async addFile(path: string): Promise<void> {
    const abs = resolve(path);
    const name = basename(abs);
    const had = this.addedFiles.get(name);
    if (had === abs) return;
    if (had !== undefined) {
      throw new Error(
        `addFile: a file named ${name} was added already (${had}); ${abs} cannot be added under the same name — rename one of them`,
      );
    }
    let described: ShippedFile[];
    try {
      described = await describeFiles(dirname(abs), [name]);
    } catch (err) {
      throw new Error(
        `addFile: cannot read ${abs}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      );
    }
    const file = described[0] as ShippedFile;
    if (!(await stat(abs)).isFile()) throw new Error(`addFile: ${abs} is not a file`);
    this.addedFiles.set(name, abs);
    setDriverFiles(this.addedFiles);
    this.fileServer.offer(file.sha256, abs);
    this.driver.filesAdded([file]);
    log.info(`Added file ${abs} (${file.size} bytes): tasks read it at WickFiles.get('${name}')`);
  }

  /** Spark's defaultParallelism: wick.default.parallelism, else the executors' cores (≥ 2). */
  get defaultParallelism(): number {
    return this.conf.get(AppConf.defaultParallelism) || Math.max(2, this.driver.totalCores);
  }

  /** Distributes an array over `numSlices` partitions. */
  parallelize<T>(data: readonly T[], numSlices = this.defaultParallelism): RDD<T> {
    checkSlices(numSlices);
    const sources: PartitionSource[] = [];
    for (let i = 0; i < numSlices; i++) {
      const from = Math.floor((i * data.length) / numSlices);
      const to = Math.floor(((i + 1) * data.length) / numSlices);
      sources.push({ kind: 'array', data: data.slice(from, to) as unknown[] });
    }
    return new RDD<T>(
      this,
      planOf(() => sources),
    );
  }

  /** The numbers start, start + step, … before end, in `numSlices` partitions; nothing is shipped. */
  range(start: number, end: number, step = 1, numSlices = this.defaultParallelism): RDD<number> {
    checkSlices(numSlices);
    if (step === 0 || !Number.isFinite(step))
      throw new Error(`range step must be a non-zero number, got ${step}`);
    const count = Math.max(0, Math.ceil((end - start) / step));
    const sources: PartitionSource[] = [];
    for (let i = 0; i < numSlices; i++) {
      const from = Math.floor((i * count) / numSlices);
      const to = Math.floor(((i + 1) * count) / numSlices);
      sources.push({ kind: 'range', start: start + from * step, end: start + to * step, step });
    }
    return new RDD<number>(
      this,
      planOf(() => sources),
    );
  }

  /**
   * The lines of a text file, in at least `minPartitions` partitions: a file the application
   * added (`wick submit --files`, addFile), named as it was added or by its name alone, which
   * every executor reads from its own copy; or any other file, by a path every executor can read
   * (a shared file system). Lazy, as Spark's sc.textFile: it returns the RDD at once, and the file
   * is sized (its splits computed) when a job first needs them, so a file added after this call
   * but before the job counts as added; a missing file fails that job. The RDD is no promise, so
   * code written for the old `await wc.textFile(…)` still works (awaiting a value gives it).
   */
  textFile(path: string, minPartitions = Math.min(this.defaultParallelism, 2)): RDD<string> {
    checkSlices(minPartitions);
    return new RDD<string>(
      this,
      planOf(() => {
        // An added file travels by its name: executors on other hosts read their fetched copy
        // (the driver's path means nothing there), and tasks wait for it (TaskDescription.files).
        const added = this.addedFileOf(path);
        const abs = added?.abs ?? resolve(path);
        let size: number;
        try {
          size = statSync(abs).size;
        } catch (err) {
          throw new Error(
            `textFile: cannot read ${abs}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
          );
        }
        const n = Math.max(1, Math.min(minPartitions, size));
        const sources: PartitionSource[] = [];
        for (let i = 0; i < n; i++) {
          sources.push({
            kind: 'textFile',
            path: added?.name ?? abs,
            start: Math.floor((i * size) / n),
            end: Math.floor(((i + 1) * size) / n),
          });
        }
        return sources;
      }),
    );
  }

  /**
   * The added file a textFile path means: its name alone (as WickFiles.get takes it), or the path
   * it was added from (relative paths resolved as addFile resolved them).
   */
  private addedFileOf(path: string): { name: string; abs: string } | undefined {
    if (isAddedFileName(path)) {
      const abs = this.addedFiles.get(path);
      if (abs !== undefined) return { name: path, abs };
    }
    const abs = resolve(path);
    const name = basename(abs);
    return this.addedFiles.get(name) === abs ? { name, abs } : undefined;
  }

  /** @internal A new shuffle's id (Spark's SparkContext.newShuffleId). */
  newShuffleId(): number {
    return this.nextShuffleId++;
  }

  /** @internal How an RDD's action runs: not part of an application's API. */
  async runJob(plan: RddPlan, action: PartitionAction): Promise<unknown[]> {
    if (this.stopped) throw new Error('Cannot run a job: this WickContext was stopped');
    this.activeJobs++;
    // The driver's sockets do not keep the process alive (see create); a running job does.
    this.keepAlive ??= setInterval(() => {}, 1 << 30);
    const warn = setInterval(() => {
      if (this.driver.executors.size === 0) {
        log.warn(
          'Initial job has not accepted any resources; check your cluster UI to ensure that workers are registered and have sufficient resources',
        );
      }
    }, NO_RESOURCES_WARNING_MS);
    try {
      return await this.dagScheduler.runJob(plan, action);
    } finally {
      clearInterval(warn);
      if (--this.activeJobs === 0) {
        clearInterval(this.keepAlive);
        this.keepAlive = undefined;
      }
    }
  }

  /** Unregisters the application, stops its executors, and closes the driver's connections. */
  async stop(): Promise<void> {
    await this.end(undefined);
  }

  private async end(failure: AppFailure | undefined, killed = false): Promise<void> {
    if (this.stopped) {
      // Stopped, its verdict still open: this failure is it (an error on its way through the
      // application's `finally { await wc.stop() }`, or a SIGTERM).
      if (failure && this.verdictPending) {
        this.verdictPending = false;
        this.client.unregister(failure, true, killed);
        this.failedAfterStop = true;
        this.failure = failure.message;
      }
      await this.closed;
      return;
    }
    this.stopped = true;
    process.off('beforeExit', this.onBeforeExit);
    // As a job does: the driver's sockets do not keep the process alive (see create), and without
    // this the process could end in the middle of stopping, before what the application does
    // after `await stop()`.
    const stopping = setInterval(() => {}, 1 << 30);
    try {
      // Spark's order (SparkContext.stop → CoarseGrainedSchedulerBackend.stopExecutors, then
      // StandaloneAppClient.stop): StopExecutor to each executor, then UnregisterApplication.
      // Here the unregister also waits for the executors to hang up, which they do as they begin
      // to exit: unregistered first, the master would kill them (KillExecutor) while they exit by
      // themselves, and they would end KILLED. It costs stop() nothing: closing the driver's
      // RpcEnv waits for their connections to close anyway.
      // No executor is started in place of one that ends from here on: an executor that
      // registered late (its code fetch took a while) and is stopped at once would otherwise be
      // replaced, only to be killed by the unregister.
      // A failure is told first, and at once: the master knows before the executors have gone
      // (they may take seconds), and a driver being killed may not get that long.
      this.client.requestTotalExecutors(0);
      if (failure) this.failure = failure.message;
      if (failure) this.client.unregister(failure, true, killed);
      else this.verdictPending = true;
      await this.driver.stopExecutors();
    } catch (err) {
      clearInterval(stopping);
      throw err;
    }
    this.closed = this.close(failure !== undefined).finally(() => clearInterval(stopping));
    // A plain stop() returns before the verdict: `finally { await wc.stop() }` must let the
    // application's error go on its way, to be the verdict (see close).
    if (failure) await this.closed;
  }

  /**
   * Unregisters (unless a failure did) and closes the driver's RpcEnv. After a plain stop() the
   * unregister waits for the end of the turn: the job template's `try { … } finally { await
   * wc.stop() }` stops the context *before* its error reaches the top of the application, and
   * an application that catches a job's failure may stop, then set process.exitCode or call
   * process.exit(1). All of that runs in promise jobs before the turn ends; the error (through
   * failAll), the exit (onExit) or the exit status set by then ends the application FAILED: how
   * the driver's program ended says how its application did, not whether it stopped first. Else
   * it FINISHED.
   */
  private async close(failed: boolean): Promise<void> {
    if (!failed) {
      await new Promise((r) => setImmediate(r));
      if (this.verdictPending) {
        this.verdictPending = false;
        const code = Number(process.exitCode ?? 0);
        const exit = code ? exitFailure(code) : undefined;
        this.client.unregister(exit);
        if (exit) this.failure = exit.message;
        failed = code !== 0;
      }
    }
    WickContext.running.delete(this);
    process.off('exit', this.onExit);
    await this.watch.end(
      failed || this.failedAfterStop ? (this.failure ?? 'the application failed') : undefined,
    );
    await this.env.stop();
    log.info(`${failed || this.failedAfterStop ? 'Failed' : 'Stopped'} application ${this.appId}`);
  }
}

/** The plan of an RDD read from a source: one run of partitions, no shuffle, sources memoized. */
function planOf(sources: () => PartitionSource[]): RddPlan {
  return { segments: [{ sources: once(sources), transformations: [] }], deps: [] };
}

function checkSlices(n: number): void {
  if (!Number.isInteger(n) || n < 1)
    throw new Error(`The number of partitions must be a whole number ≥ 1, got ${n}`);
}
