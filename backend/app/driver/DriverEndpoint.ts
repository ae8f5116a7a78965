import { AppConf } from '../../conf/app.js';
import { type TaskResourceRequest, taskResourceRequests } from '../../conf/resources.js';
import type { WickConf } from '../../conf/WickConf.js';
import { truncateMessage } from '../../protocol/bounds.js';
import { DRIVER_ENDPOINT } from '../../protocol/endpoints.js';
import {
  AddFiles,
  AppConfig,
  KillTask,
  RegisterExecutor,
  RegisterExecutorFailed,
  RegisteredExecutor,
  RetrieveAppConfig,
  StatusUpdate,
  StopExecutor,
} from '../../protocol/executor.js';
import type { AppCode, ShippedFile } from '../../protocol/files.js';
import type { WickListenerTaskEnd } from '../../protocol/listener.js';
import type { AnyMessageDef, MessageOf, WireMessage } from '../../protocol/registry.js';
import { withoutSecrets } from '../../rpc/clusterSecret.js';
import {
  type RpcCallContext,
  RpcConf,
  RpcEndpoint,
  type RpcSenderContext,
  refuse,
} from '../../rpc/index.js';
import {
  isOutOfMemoryExit,
  OUT_OF_MEMORY_ERROR,
  outOfMemoryReason,
} from '../../shared/outOfMemory.js';
import { ExecutorData } from './ExecutorData.js';
import { ExecutorLoss } from './ExecutorLoss.js';
import { LiveListenerBus } from './LiveListenerBus.js';
import { ReviveOffers } from './messages.js';
import { queueSlots, takeBack } from './prefetch.js';
import {
  type JobSpec,
  type LostTask,
  type Offer,
  TaskScheduler,
} from './scheduler/TaskScheduler.js';
import { TaskDurations } from './TaskDurations.js';
import { TaskLauncher } from './TaskLauncher.js';
import { TaskResourceSlots } from './TaskResourceSlots.js';

export { PREFETCH_PER_CORE } from './prefetch.js';

/** What a driver's executors fetch from it: the code tree (wick submit's) and the added files. */
export interface ShippedApp {
  code?: AppCode;
  files: ShippedFile[];
}

/** How long stopExecutors waits for the executors to hang up (as the Python driver example). */
export const EXECUTOR_STOP_PATIENCE_MS = 10_000;

/**
 * The driver's endpoint that executors talk to (Spark's CoarseGrainedSchedulerBackend
 * DriverEndpoint): executors register here and report task status; it offers their free cores to
 * the TaskScheduler and launches what it places. For jobs of short tasks it also queues tasks
 * ahead on busy executors and, at a job's end, takes back what an executor has not started for
 * an idle one: prefetch.ts decides both, this applies its decisions.
 */
export class DriverEndpoint extends RpcEndpoint {
  static readonly ENDPOINT_NAME = DRIVER_ENDPOINT;

  private readonly registered = new Map<string, ExecutorData>();
  /** Executors whose worker decommissions: given no more tasks, stopped once they hold none. */
  private readonly decommissioning = new Set<string>();
  /** Executors granted and not registered yet, and lost ones the master has not explained. */
  private readonly loss = new ExecutorLoss(this.log);
  readonly scheduler: TaskScheduler;
  private currentAppId = '';
  private readonly firstExecutorWaiters: (() => void)[] = [];
  /** What sends the tasks placed, and kills those of an aborted job. */
  private readonly launcher: TaskLauncher;
  private readonly taskMs = new TaskDurations();
  /** Set by stopExecutors: resolves its wait once the last executor has hung up. */
  private allStopped: (() => void) | undefined;
  private stopping = false;

  /** Each task's custom resources (wick.task.resource.*). */
  private readonly taskResourceRequests: readonly TaskResourceRequest[];

  constructor(
    private readonly conf: WickConf,
    private readonly appDir: string,
    maxFailures: number,
    /** Milliseconds from a fixed point (performance.now()); tests stop it. */
    private readonly now: () => number = () => performance.now(),
    /** The application's code tree and added files, which executors fetch from the driver. */
    private readonly shipped: ShippedApp = { files: [] },
    /**
     * Where it posts executors added and removed and tasks ended (assembleDriver.ts subscribes the
     * DAGScheduler, the application's client and listeners), each before it acts on it.
     */
    readonly bus: LiveListenerBus = new LiveListenerBus(),
  ) {
    super();
    // Throws a ConfigError naming the key for a bad amount: the application fails at start.
    this.taskResourceRequests = taskResourceRequests(conf);
    this.scheduler = new TaskScheduler(maxFailures);
    this.launcher = new TaskLauncher(
      this.scheduler,
      this.registered,
      conf.get(RpcConf.maxMessageSize),
      () => this.shipped.files.length,
    );
    this.on(RetrieveAppConfig, () =>
      AppConfig({
        appId: this.currentAppId,
        // Never how to find the cluster secret, should the driver have been given one.
        props: withoutSecrets(Object.fromEntries(this.conf.entries())),
        appDir: this.appDir,
        ...(this.shipped.code ? { code: this.shipped.code } : {}),
        ...(this.shipped.files.length > 0 ? { files: this.shipped.files } : {}),
      }),
    );
    this.on(RegisterExecutor, (msg, ctx) => this.registerExecutor(msg, ctx));
    this.on(StatusUpdate, (msg) => this.statusUpdate(msg));
    this.on(ReviveOffers, () => this.makeOffers());
  }

  /** The registered executors, by id (read-only: the handlers here change them). */
  get executors(): ReadonlyMap<string, ExecutorData> {
    return this.registered;
  }

  get appId(): string {
    return this.currentAppId;
  }

  get totalCores(): number {
    let n = 0;
    for (const e of this.registered.values()) n += e.cores;
    return n;
  }

  /**
   * Files the application added: executors registered already are told now, later ones in
   * AppConfig, and each task says how many it needs (it waits for them on its executor).
   */
  filesAdded(files: readonly ShippedFile[]): void {
    this.shipped.files.push(...files);
    for (const e of this.registered.values()) e.ref.send(AddFiles({ files: [...files] }));
  }

  /** The master registered the application under this id (executors ask it in AppConfig). */
  applicationRegistered(appId: string): void {
    this.currentAppId = appId;
  }

  /** The master ended the application: its jobs fail with `reason`. */
  applicationEnded(reason: string): void {
    this.scheduler.abortAll(reason);
  }

  /** Runs a job on the executors; resolves with every partition's result. */
  runJob(spec: JobSpec): Promise<unknown[]> {
    const { jobId, done } = this.scheduler.submit(spec);
    this.makeOffers();
    return done.finally(() => this.taskMs.jobEnded(jobId));
  }

  /** Resolves once at least one executor has registered. */
  whenExecutorRegistered(): Promise<void> {
    if (this.registered.size > 0) return Promise.resolve();
    return new Promise((r) => this.firstExecutorWaiters.push(r));
  }

  override onDisconnected(address: string): void {
    for (const e of this.registered.values()) {
      if (e.address === address) this.removeExecutor(e.id, `Executor ${e.id} disconnected`);
    }
  }

  /** The master granted the application this executor; it registers once started. */
  executorGranted(executorId: string): void {
    if (!this.registered.has(executorId)) this.loss.granted(executorId);
  }

  /**
   * The executor's worker decommissions (the master's ExecutorDecommissioned; Spark's
   * CoarseGrainedSchedulerBackend.decommissionExecutors): no more tasks go there, those waiting in
   * its queue are taken back to run elsewhere, and it is stopped (StopExecutor) once its running
   * tasks have ended. Its map outputs go with it, by the path of any lost executor: what needs
   * them reruns their map tasks on the other executors (Spark's choice too without
   * spark.storage.decommission.shuffleBlocks.enabled; Wick migrates no blocks).
   */
  decommissionExecutor(executorId: string, reason: string): void {
    if (this.decommissioning.has(executorId) || this.stopping) return;
    this.decommissioning.add(executorId);
    const executor = this.registered.get(executorId);
    this.log.info(
      `Executor ${executorId} decommissioning (${reason}): no more tasks there${executor ? `; stopping it once its ${executor.cores - executor.freeCores} running task(s) end` : ''}`,
    );
    if (executor && executor.queued > 0) {
      for (const taskId of executor.askBack(executor.queued)) {
        executor.ref.send(
          KillTask({ taskId, reason: 'its executor is decommissioning', ifNotStarted: true }),
        );
      }
    }
    if (executor) this.stopIfDrained(executor);
    this.makeOffers();
  }

  /** A decommissioning executor that holds no task is stopped. */
  private stopIfDrained(executor: ExecutorData): void {
    if (!this.decommissioning.has(executor.id)) return;
    if (executor.queued > 0 || executor.freeCores < executor.cores) return;
    this.log.info(`Stopping decommissioned executor ${executor.id}: its tasks have ended`);
    executor.ref.send(StopExecutor({}));
  }

  /**
   * The executors that may be given tasks: registered, and not decommissioning (a fresh iterable
   * each call; no copy in the usual case, since this runs after every task's end).
   */
  private schedulable(): Iterable<ExecutorData> {
    if (this.decommissioning.size === 0) return this.registered.values();
    return [...this.registered.values()].filter((e) => !this.decommissioning.has(e.id));
  }

  /**
   * The executors that may be given queued tasks: the schedulable ones, less those whose tasks
   * take custom resources (a queued task would start there without addresses of its own, so they
   * get tasks only as those are free). No copy when no executor has any.
   */
  private queueable(): Iterable<ExecutorData> {
    for (const e of this.registered.values()) {
      if (e.taskResources) return [...this.schedulable()].filter((x) => !x.taskResources);
    }
    return this.schedulable();
  }

  /**
   * The executor is gone (the master said so, or its connection dropped): rerun its tasks.
   * `exitStatus` is set when the master reports how its process ended.
   */
  removeExecutor(
    executorId: string,
    reason: string,
    exitStatus?: number,
    workerLost = false,
  ): void {
    if (this.loss.endedStarting(executorId, reason, exitStatus, this.stopping)) this.makeOffers();
    const holding = this.loss.takeHolding(executorId, exitStatus);
    if (holding) {
      // The master's word on an executor whose connection dropped first.
      this.executorEnded(executorId, holding.tasks, holding.cores, reason);
      return;
    }
    const executor = this.registered.get(executorId);
    if (!executor || !this.registered.delete(executorId)) return;
    this.decommissioning.delete(executorId);
    if (this.stopping) {
      this.log.debug(`Executor ${executorId} stopped: ${reason}`);
      if (this.registered.size === 0) this.allStopped?.();
      return;
    }
    this.bus.post({
      event: 'WickListenerExecutorRemoved',
      executorId,
      reason: truncateMessage(reason),
      workerLost,
    });
    const onCores = new Set(executor.onCores());
    const lost = this.scheduler.executorLost(executorId);
    this.log.info(
      `Removed executor ${executorId}: ${reason}${lost.length > 0 ? `; rerunning its ${lost.length} task(s) elsewhere` : ''}`,
    );
    const running = lost.filter((t) => onCores.has(t.taskId));
    if (exitStatus !== undefined) this.executorEnded(executorId, running, executor.cores, reason);
    else if (running.length > 0)
      this.loss.awaitEnd(executorId, { tasks: running, cores: executor.cores });
    this.makeOffers();
  }

  /**
   * How a lost executor ended, as its worker told the master: one that ran out of memory was
   * killed by what it ran, so the tasks that held its cores fail (Spark counts an executor's exit
   * against its running tasks too), and after wick.task.maxFailures their job aborts with the
   * reason, instead of each attempt killing one executor after another for ever. Other ends (a
   * SIGKILL, a lost worker) are not the tasks' doing as far as anyone can tell: they just run
   * again.
   */
  private executorEnded(
    executorId: string,
    running: readonly LostTask[],
    cores: number,
    reason: string,
  ): void {
    if (running.length === 0 || !isOutOfMemoryExit(reason)) return;
    const memoryMB = this.conf.get(AppConf.executorMemory);
    const kill = this.scheduler.lostTasksFailed(running, (t) => ({
      name: OUT_OF_MEMORY_ERROR,
      message: outOfMemoryReason(
        { taskId: t.taskId, partition: t.partition, stageId: t.jobId },
        { memoryMB, cores },
      ),
    }));
    this.log.warn(
      `Executor ${executorId} ran out of memory: ${running.map((t) => `task ${t.taskId}`).join(', ')} failed with it`,
    );
    this.launcher.killTasks(kill);
    this.makeOffers();
  }

  /**
   * Ends the application's jobs and asks every executor to exit (StopExecutor, as Spark's
   * stopExecutors); resolves once each has hung up, or after `patienceMs` (an executor that does
   * not exit is the master's to kill when the application unregisters). Nothing is launched
   * after it.
   */
  stopExecutors(patienceMs = EXECUTOR_STOP_PATIENCE_MS): Promise<void> {
    this.scheduler.abortAll('The application was stopped');
    this.stopping = true;
    for (const e of this.registered.values()) {
      try {
        e.ref.send(StopExecutor({}));
      } catch {
        // Already gone.
      }
    }
    if (this.registered.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.log.warn(
          `Executors still connected ${patienceMs} ms after StopExecutor: ${[...this.registered.keys()].join(', ')}; the master will kill them`,
        );
        resolve();
      }, patienceMs);
      this.allStopped = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  override onStop(): void {
    this.scheduler.abortAll('The application was stopped');
  }

  private registerExecutor(
    m: MessageOf<typeof RegisterExecutor>,
    ctx: RpcCallContext,
  ): MessageOf<typeof RegisteredExecutor> | MessageOf<typeof RegisterExecutorFailed> {
    if (this.registered.has(m.executorId)) {
      return RegisterExecutorFailed({ message: `Duplicate executor ID: ${m.executorId}` });
    }
    const c = ctx.connection;
    if (c && c.principal.kind !== 'open' && c.principal.kind !== 'cluster') {
      if (c.principal.kind !== 'app' || c.principal.id !== this.appId) {
        throw refuse('RegisterExecutor', `only executors of ${this.appId} may register here`);
      }
    }
    // Tasks go out over the connection it registered on, and only its StatusUpdates count.
    const ref = c ? this.rpcEnv.refOver(c, m.executor.name) : this.rpcEnv.endpointRef(m.executor);
    this.loss.registered(m.executorId);
    const executor = new ExecutorData(
      m.executorId,
      ref,
      ctx.senderAddress,
      m.hostname,
      m.cores,
      this.now(),
      c,
    );
    if (this.taskResourceRequests.length > 0) {
      executor.taskResources = new TaskResourceSlots(m.resources ?? {}, this.taskResourceRequests);
    }
    this.registered.set(m.executorId, executor);
    this.log.info(
      `Registered executor ${ref} (${m.hostname}) with ID ${m.executorId}, ${m.cores} core(s)`,
    );
    this.bus.post({
      event: 'WickListenerExecutorAdded',
      executorId: m.executorId,
      host: m.hostname,
      cores: m.cores,
    });
    for (const w of this.firstExecutorWaiters.splice(0)) w();
    // The files added so far, all of them: the executor asked for its AppConfig before it
    // registered, and a file added in between reached neither that AppConfig nor filesAdded's
    // AddFiles (sent to registered executors only), so its tasks would wait for it for ever. The
    // executor fetches only what it lacks. Sent before any LaunchTask (those follow ReviveOffers).
    if (this.shipped.files.length > 0) ref.send(AddFiles({ files: [...this.shipped.files] }));
    // Started too late: it exits as the others do, and stopExecutors waits for it too. (Its
    // backend handles StopExecutor once its registration is done.)
    if (this.stopping || this.decommissioning.has(m.executorId)) ref.send(StopExecutor({}));
    // After the reply: the executor is ready for tasks once it has it.
    else this.self.send(ReviveOffers({}));
    return RegisteredExecutor({});
  }

  /**
   * A task's status counts only from the executor it was launched on, over the connection that
   * executor registered on. Checked before the handler (rather than in it), so that an ask of
   * it, which the handler never sees, is refused as NotPermitted too.
   */
  override senderProblem(
    def: AnyMessageDef,
    message: WireMessage,
    sender: RpcSenderContext,
  ): string | undefined {
    if (def !== StatusUpdate) return undefined;
    const m = message as MessageOf<typeof StatusUpdate>;
    const executor = this.registered.get(m.executorId);
    if (sender.connection && executor?.connection !== sender.connection) {
      return `only executor ${m.executorId} may report task ${m.taskId} of it, over the connection it registered on`;
    }
    const launchedOn = this.scheduler.executorOf(m.taskId);
    if (launchedOn !== undefined && launchedOn !== m.executorId) {
      return `task ${m.taskId} was launched on executor ${launchedOn}, not ${m.executorId}`;
    }
    return undefined;
  }

  private statusUpdate(m: MessageOf<typeof StatusUpdate>): void {
    const executor = this.registered.get(m.executorId);
    if (m.state === 'LAUNCHING' || m.state === 'RUNNING') return;
    // Built field by field: this runs for every task, and spreads of small objects cost here.
    const end: WickListenerTaskEnd = {
      event: 'WickListenerTaskEnd',
      taskId: m.taskId,
      executorId: m.executorId,
      state: m.state,
    };
    const jobId = this.scheduler.jobOf(m.taskId);
    if (jobId !== undefined) end.jobId = jobId;
    if (m.durationMs !== undefined) end.durationMs = m.durationMs;
    if (m.metrics) end.metrics = m.metrics;
    const stage = this.scheduler.stageOfTask(m.taskId);
    if (stage) {
      end.stageId = stage.stageId;
      end.stageAttemptId = stage.stageAttemptId;
      end.index = stage.index;
    }
    if (m.error)
      end.error = truncateMessage(m.error.stack ?? `${m.error.name}: ${m.error.message}`);
    this.bus.post(end);
    // As Spark's: any end frees what the task held, even when its job is gone (aborted meanwhile,
    // its tasks killed), or the executor's cores would stay taken for good.
    executor?.ended(m.taskId, this.now());
    if (executor?.answeredAskBack(m.taskId) && m.state === 'KILLED') {
      // Taken back before it started (see rebalance): it runs elsewhere, no failure counted.
      this.scheduler.taskTakenBack(m.taskId);
    } else if (m.state === 'FINISHED') {
      if (m.durationMs !== undefined) {
        const jobId = this.scheduler.jobOf(m.taskId);
        if (jobId !== undefined) this.taskMs.note(jobId, m.durationMs);
      }
      this.scheduler.taskFinished(m.taskId, m.result);
    } else {
      const failed = this.scheduler.taskFailed(
        m.taskId,
        m.error ?? { name: 'TaskFailed', message: `Task ${m.taskId} ended ${m.state}` },
      );
      if (m.state === 'FAILED') {
        this.log.warn(
          `Lost task ${m.taskId} on executor ${m.executorId}: ${m.error?.message ?? m.state}`,
        );
      }
      if (failed) this.launcher.killTasks(failed.toKill);
    }
    if (executor && this.decommissioning.size > 0) this.stopIfDrained(executor);
    this.makeOffers();
  }

  /**
   * Offers every executor's free cores to the scheduler and launches what it places; then, for
   * jobs of short tasks, queue slots on executors whose cores are all busy (prefetch.ts).
   */
  private makeOffers(): void {
    if (this.registered.size === 0 || this.stopping) return;
    if (this.scheduler.hasPending) this.placePending();
    this.rebalance();
  }

  private placePending(): void {
    const offers: Offer[] = [];
    for (const e of this.schedulable()) {
      if (e.freeCores > 0) offers.push({ executorId: e.id, freeCores: e.freeCores });
    }
    if (offers.length > 0)
      this.launcher.launch(this.started(this.scheduler.resourceOffers(offers)), false);
    if (this.loss.anyStarting) return;
    for (const [jobId, ms] of this.taskMs.entries()) {
      if (!this.scheduler.hasPending) return;
      const slots = queueSlots(this.queueable(), ms);
      if (slots.length > 0)
        this.launcher.launch(
          this.started(this.scheduler.resourceOffers(slots, (id) => id === jobId)),
          true,
          ms,
        );
    }
  }

  /** Tells the bus of tasks placed on executors (TaskStart), and passes them on. */
  private started<T extends { executorId: string; task: { taskId: number; attempt: number } }>(
    placed: T[],
  ): T[] {
    if (placed.length === 0 || !this.bus.hears('WickListenerTaskStart')) return placed;
    const time = Date.now();
    for (const { executorId, task } of placed) {
      const stage = this.scheduler.stageOfTask(task.taskId);
      if (!stage) continue;
      this.bus.post({
        event: 'WickListenerTaskStart',
        taskId: task.taskId,
        stageId: stage.stageId,
        stageAttemptId: stage.stageAttemptId,
        index: stage.index,
        attempt: task.attempt,
        executorId,
        time,
      });
    }
    return placed;
  }

  /**
   * The end of a job (prefetch.ts's takeBack): once no task waits here to be placed, an executor
   * with a free core takes over what another has queued and not started, which that one gives
   * back (KillTask ifNotStarted) to be placed again.
   */
  private rebalance(): void {
    if (this.scheduler.hasPending || this.taskMs.size === 0) return;
    const decision = takeBack(this.schedulable(), this.taskMs.shortest(), this.now());
    if (!decision) return;
    const donor = this.registered.get(decision.donorId) as ExecutorData;
    for (const taskId of donor.askBack(decision.count)) {
      donor.ref.send(
        KillTask({ taskId, reason: 'taken back to run on an idle executor', ifNotStarted: true }),
      );
    }
    this.log.debug(`Asked executor ${donor.id} to give back ${decision.count} queued task(s)`);
  }
}
