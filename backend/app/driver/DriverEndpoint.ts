import type { WickConf } from '../../conf/WickConf.js';
import {
  AppConfig,
  KillTask,
  LaunchTask,
  type RegisterExecutor,
  RegisterExecutorFailed,
  RegisteredExecutor,
  type StatusUpdate,
  StopExecutor,
  type TaskDescription,
} from '../../protocol/executor.js';
import type { MessageOf, WireMessage } from '../../protocol/registry.js';
import {
  type RpcCallContext,
  RpcConf,
  RpcEndpoint,
  type RpcEndpointRef,
  type RpcSenderContext,
  unsupported,
} from '../../rpc/index.js';
import { type JobSpec, type Offer, TaskScheduler } from './TaskScheduler.js';

interface ExecutorData {
  id: string;
  ref: RpcEndpointRef;
  address: string;
  host: string;
  cores: number;
  /** Cores with no task of ours. */
  freeCores: number;
  /** Tasks sent to it beyond its cores, waiting there for one (prefetch, see makeOffers). */
  queued: number;
  /** Tasks launched here that have not reported an end: each holds a core or a queue slot. */
  tasks: Set<number>;
  /** When it last reported a task's end (DriverEndpoint's now()). */
  heardAt: number;
  /** Queued tasks asked back (KillTask ifNotStarted) that have not reported an end yet. */
  takingBack: Set<number>;
}

/**
 * Prefetch: once a job's tasks prove short, each executor whose cores are all busy also gets a
 * few of its tasks queued, so that a core that frees up starts its next task at once instead of
 * after a round trip to the driver (and the executor hands its threads several at a time). The
 * queue holds about PREFETCH_QUEUE_MS of work per core, by the job's average task duration so
 * far, and at most PREFETCH_PER_CORE tasks: so an executor that turns out slower than the others
 * holds back at most that much of the job's end. The executor still runs at most `cores` tasks at
 * a time (Executor queues the rest), and jobs of tasks longer than PREFETCH_QUEUE_MS are placed
 * exactly as Spark places them: one task per free core. Queue slots are refilled half a queue at
 * a time, so that they travel together in one write.
 *
 * Each refill costs the driver and the executor a wake-up and a write or two, which for tasks of a
 * millisecond or so is CPU taken from the tasks themselves, and on a virtual machine each wake-up
 * of a thread on another CPU costs more again: the queue is long enough (300 ms) that refills come
 * every 150 ms of work, and that an executor may hold its tasks' ends for up to 150 ms to report
 * them together (100 ms in the task thread, OUTCOME_HOLD_MS, then 50 in StatusReporter) with work
 * to spare. On SparkPi's 1.7 ms tasks (bench/pi), going from 60 to 150 ms (with the holds from
 * 10–12 to 25–30 ms) took the executors' main threads from about 105 to 70 ms of CPU per job and
 * the driver's from 53 to 41 ms. At 150 ms the ends came too late for the refill, which came when
 * the executor had 0–40 ms of work left: one executor's task thread ran out and waited for it 5–9
 * times in each job of 1,000 tasks (3–8 ms each); at 300 ms, once, after the job's first task
 * (when the driver learns how long its tasks take). The cost is the end of a job: when its last
 * tasks are queued, an executor slower than the others would finish up to a queue's worth after
 * them (in SparkPi on two busy CPUs, one executor stood idle for the last 15–100 ms of most jobs;
 * keeping each queue to its share of what was left, by cores, did not shorten that measurably,
 * as executors run at uneven speeds on a shared machine).
 * So an executor that runs out takes over what another has queued and not started (rebalance):
 * the same jobs then ended 1–17 ms apart.
 */
export const PREFETCH_PER_CORE = 192;
const PREFETCH_QUEUE_MS = 300;
/** A refill's first part, sent at once (see launch): this much work per core. */
const FIRST_WRITE_MS = 10;
/** Weight of the newest duration in a job's running average. */
const DURATION_EWMA_WEIGHT = 0.2;

/**
 * The driver's endpoint that executors talk to (Spark's CoarseGrainedSchedulerBackend
 * DriverEndpoint): executors register here and report task status; it offers their free cores to
 * the TaskScheduler and launches what it places.
 */
export class DriverEndpoint extends RpcEndpoint {
  static readonly ENDPOINT_NAME = 'CoarseGrainedScheduler';

  readonly executors = new Map<string, ExecutorData>();
  /**
   * Executors the master has granted that have not registered yet. While there are any, no task
   * is queued ahead on the others: a short job would otherwise be queued whole on the first
   * executor to register, leaving the one still starting with nothing to do.
   */
  private readonly starting = new Set<string>();
  readonly scheduler: TaskScheduler;
  appId = '';
  private readonly maxMessageSize: number;
  private readonly firstExecutorWaiters: (() => void)[] = [];
  /** The serialized size of what a job's tasks share, by the job's action (see serializedSize). */
  private readonly sharedSizes = new WeakMap<
    object,
    { transformations: TaskDescription['transformations']; bytes: number }
  >();
  /** Running average of the finished tasks' durations (ms), by job. */
  private readonly taskMs = new Map<number, number>();

  constructor(
    private readonly conf: WickConf,
    private readonly appDir: string,
    maxFailures: number,
    /** Milliseconds from a fixed point (performance.now()); tests stop it. */
    private readonly now: () => number = () => performance.now(),
  ) {
    super();
    this.scheduler = new TaskScheduler(maxFailures);
    this.maxMessageSize = conf.get(RpcConf.maxMessageSize);
  }

  get totalCores(): number {
    let n = 0;
    for (const e of this.executors.values()) n += e.cores;
    return n;
  }

  /** Runs a job on the executors; resolves with every partition's result. */
  runJob(spec: JobSpec): Promise<unknown[]> {
    const { jobId, done } = this.scheduler.submit(spec);
    this.makeOffers();
    return done.finally(() => this.taskMs.delete(jobId));
  }

  /** Resolves once at least one executor has registered. */
  whenExecutorRegistered(): Promise<void> {
    if (this.executors.size > 0) return Promise.resolve();
    return new Promise((r) => this.firstExecutorWaiters.push(r));
  }

  override receiveAndReply(message: WireMessage, ctx: RpcCallContext): unknown {
    switch (message.type) {
      case 'RetrieveAppConfig':
        return AppConfig({
          appId: this.appId,
          props: Object.fromEntries(this.conf.entries()),
          appDir: this.appDir,
        });
      case 'RegisterExecutor':
        return this.registerExecutor(message as MessageOf<typeof RegisterExecutor>, ctx);
      default:
        throw unsupported(message, ctx);
    }
  }

  override receive(message: WireMessage, sender: RpcSenderContext): void {
    if (message.type !== 'StatusUpdate') throw unsupported(message, sender);
    const m = message as MessageOf<typeof StatusUpdate>;
    if (m.state === 'LAUNCHING' || m.state === 'RUNNING') return;
    // As Spark's: any end frees what the task held, even when its job is gone (aborted meanwhile,
    // its tasks killed), or the executor's cores would stay taken for good.
    const executor = this.executors.get(m.executorId);
    if (executor?.tasks.delete(m.taskId)) {
      release(executor);
      executor.heardAt = this.now();
    }
    if (executor?.takingBack.delete(m.taskId) && m.state === 'KILLED') {
      // Taken back before it started (see rebalance): it runs elsewhere, no failure counted.
      this.scheduler.taskTakenBack(m.taskId);
    } else if (m.state === 'FINISHED') {
      if (m.durationMs !== undefined) this.noteDuration(m.taskId, m.durationMs);
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
      if (failed) this.killTasks(failed.toKill);
    }
    this.makeOffers();
  }

  override onDisconnected(address: string): void {
    for (const e of this.executors.values()) {
      if (e.address === address) this.removeExecutor(e.id, `Executor ${e.id} disconnected`);
    }
  }

  /** The master granted the application this executor; it registers once started. */
  executorGranted(executorId: string): void {
    if (!this.executors.has(executorId)) this.starting.add(executorId);
  }

  /** The executor is gone (the master said so, or its connection dropped): rerun its tasks. */
  removeExecutor(executorId: string, reason: string): void {
    if (this.starting.delete(executorId)) this.makeOffers();
    if (!this.executors.delete(executorId)) return;
    const requeued = this.scheduler.executorLost(executorId);
    this.log.info(
      `Removed executor ${executorId}: ${reason}${requeued ? `; rerunning its ${requeued} task(s) elsewhere` : ''}`,
    );
    this.makeOffers();
  }

  stopExecutors(): void {
    for (const e of this.executors.values()) {
      try {
        e.ref.send(StopExecutor({}));
      } catch {
        // Already gone.
      }
    }
  }

  override onStop(): void {
    this.scheduler.abortAll('The application was stopped');
  }

  private registerExecutor(
    m: MessageOf<typeof RegisterExecutor>,
    ctx: RpcCallContext,
  ): WireMessage {
    if (this.executors.has(m.executorId)) {
      return RegisterExecutorFailed({ message: `Duplicate executor ID: ${m.executorId}` });
    }
    const ref = this.rpcEnv.endpointRef(m.executor);
    this.starting.delete(m.executorId);
    this.executors.set(m.executorId, {
      id: m.executorId,
      ref,
      address: ctx.senderAddress,
      host: m.hostname,
      cores: m.cores,
      freeCores: m.cores,
      queued: 0,
      tasks: new Set(),
      heardAt: this.now(),
      takingBack: new Set(),
    });
    this.log.info(
      `Registered executor ${ref} (${m.hostname}) with ID ${m.executorId}, ${m.cores} core(s)`,
    );
    for (const w of this.firstExecutorWaiters.splice(0)) w();
    queueMicrotask(() => this.makeOffers());
    return RegisteredExecutor({});
  }

  /**
   * Offers every executor's free cores to the scheduler and launches what it places; then, for
   * jobs of short tasks, queue slots on executors whose cores are all busy (see PREFETCH_PER_CORE).
   */
  private makeOffers(): void {
    if (this.executors.size === 0) return;
    if (this.scheduler.hasPending) this.placePending();
    this.rebalance();
  }

  private placePending(): void {
    const offers: Offer[] = [];
    for (const e of this.executors.values()) {
      if (e.freeCores > 0) offers.push({ executorId: e.id, freeCores: e.freeCores });
    }
    if (offers.length > 0) this.launch(this.scheduler.resourceOffers(offers), false);
    if (this.starting.size > 0) return;
    for (const [jobId, ms] of this.taskMs) {
      if (!this.scheduler.hasPending) return;
      const perCore = Math.min(PREFETCH_PER_CORE, Math.floor(PREFETCH_QUEUE_MS / ms));
      if (perCore < 1) continue;
      const slots: Offer[] = [];
      for (const e of this.executors.values()) {
        const room = e.cores * perCore - e.queued;
        if (e.freeCores === 0 && room >= Math.ceil((e.cores * perCore) / 2))
          slots.push({ executorId: e.id, freeCores: room });
      }
      // The emptiest queues first: tasks taken back (rebalance) go to the executor that is short.
      slots.sort((a, b) => b.freeCores - a.freeCores);
      if (slots.length > 0)
        this.launch(
          this.scheduler.resourceOffers(slots, (id) => id === jobId),
          true,
          ms,
        );
    }
  }

  /**
   * The end of a job: once no task waits here to be placed, an executor with a free core would
   * stand idle while another still has tasks queued (prefetch), and the job would end only when
   * that queue is done. So the executor with the most queued is asked to give back the last of
   * them that it has not started (KillTask ifNotStarted), as many as even out the two by cores,
   * and those it gives back are placed again, on the emptiest executors first. Spark places one
   * task per free core and needs no such step; its speculation (spark.speculation) is the nearest
   * thing, for a straggling task. One take-back at a time: the next waits for its answers.
   */
  private rebalance(): void {
    if (this.scheduler.hasPending || this.taskMs.size === 0) return;
    let idleCores = 0;
    for (const e of this.executors.values()) {
      if (e.takingBack.size > 0) return;
      idleCores += e.freeCores;
    }
    if (idleCores === 0) return;
    // How long its tasks take: the shortest of the running jobs', so as to take back too few
    // rather than too many.
    const ms = Math.min(...this.taskMs.values());
    const now = this.now();
    let donor: ExecutorData | undefined;
    let donorQueued = 0;
    for (const e of this.executors.values()) {
      if (e.freeCores > 0 || e.queued === 0) continue;
      // Its queue now, as far as we can tell: ends are reported up to OUTCOME_HOLD_MS late, and
      // meanwhile each of its cores goes on at a task per `ms`.
      const queuedNow = e.queued - ((now - e.heardAt) * e.cores) / ms;
      if (queuedNow > donorQueued) {
        donor = e;
        donorQueued = queuedNow;
      }
    }
    if (!donor) return;
    const count = Math.floor((donorQueued * idleCores) / (idleCores + donor.cores));
    if (count < 1) return;
    // The last launched are the last in its queue (an executor runs its tasks in launch order).
    const last = [...donor.tasks].slice(-count);
    for (const taskId of last) {
      donor.takingBack.add(taskId);
      donor.ref.send(
        KillTask({ taskId, reason: 'taken back to run on an idle executor', ifNotStarted: true }),
      );
    }
    this.log.debug(`Asked executor ${donor.id} to give back ${count} queued task(s)`);
  }

  /**
   * Sends the tasks placed: on free cores, or (`queued`, with their job's task duration `ms`) to
   * queue slots. What one turn sends goes out in one write per executor at the end of the turn,
   * but a queue's refill is up to PREFETCH_PER_CORE tasks per core, a few milliseconds to
   * serialize, during which an executor that is short of work would wait for all of them. So
   * tasks for free cores go out at once, and a refill's first FIRST_WRITE_MS of work per core too.
   */
  private launch(
    placed: { executorId: string; task: TaskDescription }[],
    queued: boolean,
    ms = 0,
  ): void {
    const sent = new Map<ExecutorData, number>();
    for (const { executorId, task } of placed) {
      // An earlier task of this batch may have aborted the job (it was too large).
      if (this.scheduler.jobOf(task.taskId) === undefined) continue;
      const e = this.executors.get(executorId) as ExecutorData;
      if (this.tooLarge(task)) continue;
      if (queued) e.queued++;
      else e.freeCores--;
      e.tasks.add(task.taskId);
      e.ref.send(LaunchTask({ task }));
      const n = (sent.get(e) ?? 0) + 1;
      sent.set(e, n);
      if (queued && n === e.cores * Math.ceil(FIRST_WRITE_MS / ms)) e.ref.flush();
    }
    if (!queued) for (const e of sent.keys()) e.ref.flush();
  }

  /**
   * Asks executors to stop tasks of an aborted job (Spark cancels them too). Each frees what it
   * held when it reports its end; tasks placed but never launched need nothing.
   */
  private killTasks(tasks: { taskId: number; executorId: string }[]): void {
    for (const { taskId, executorId } of tasks) {
      const e = this.executors.get(executorId);
      if (e?.tasks.has(taskId)) e.ref.send(KillTask({ taskId, reason: 'its job was aborted' }));
    }
  }

  /**
   * Buffer.byteLength(JSON.stringify(task)), without serializing what every task of a job shares:
   * its transformations and action (the functions' sources and values) are measured once per job.
   */
  private serializedSize(task: TaskDescription): number {
    let shared = this.sharedSizes.get(task.action);
    if (shared?.transformations !== task.transformations) {
      shared = {
        transformations: task.transformations,
        bytes: Buffer.byteLength(
          `,"transformations":${JSON.stringify(task.transformations)},"action":${JSON.stringify(task.action)}`,
        ),
      };
      this.sharedSizes.set(task.action, shared);
    }
    // The task's own fields, in the order describe() gives them; their closing brace stands for
    // the whole object's.
    const own = JSON.stringify({
      taskId: task.taskId,
      jobId: task.jobId,
      stageId: task.stageId,
      partition: task.partition,
      attempt: task.attempt,
      source: task.source,
    });
    return Buffer.byteLength(own) + shared.bytes;
  }

  private noteDuration(taskId: number, ms: number): void {
    const jobId = this.scheduler.jobOf(taskId);
    if (jobId === undefined) return;
    const avg = this.taskMs.get(jobId);
    this.taskMs.set(jobId, avg === undefined ? ms : avg + DURATION_EWMA_WEIGHT * (ms - avg));
  }

  /** Spark's check in launchTasks: a task larger than a frame aborts its job with advice. */
  private tooLarge(task: TaskDescription): boolean {
    const size = this.serializedSize(task);
    if (size < this.maxMessageSize) return false;
    const kill = this.scheduler.abort(
      task.jobId,
      `Serialized task ${task.taskId}:${task.partition} was ${size} bytes, which exceeds max allowed: wick.rpc.message.maxSize (${this.maxMessageSize} bytes). Consider increasing wick.rpc.message.maxSize or using broadcast variables for large values.`,
    );
    this.killTasks(kill);
    return true;
  }
}

/** A task of the executor's ended: a queued one takes its core, else the core is free. */
function release(e: ExecutorData): void {
  if (e.queued > 0) e.queued--;
  else e.freeCores++;
}
