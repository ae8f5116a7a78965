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
import { type JobSpec, TaskScheduler } from './TaskScheduler.js';

interface ExecutorData {
  id: string;
  ref: RpcEndpointRef;
  address: string;
  host: string;
  cores: number;
  freeCores: number;
}

/**
 * The driver's endpoint that executors talk to (Spark's CoarseGrainedSchedulerBackend
 * DriverEndpoint): executors register here and report task status; it offers their free cores to
 * the TaskScheduler and launches what it places.
 */
export class DriverEndpoint extends RpcEndpoint {
  static readonly ENDPOINT_NAME = 'CoarseGrainedScheduler';

  readonly executors = new Map<string, ExecutorData>();
  readonly scheduler: TaskScheduler;
  appId = '';
  private readonly maxMessageSize: number;
  private readonly firstExecutorWaiters: (() => void)[] = [];

  constructor(
    private readonly conf: WickConf,
    private readonly appDir: string,
    maxFailures: number,
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
    const { done } = this.scheduler.submit(spec);
    this.makeOffers();
    return done;
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
    const executor = this.executors.get(m.executorId);
    let ended: { executorId: string } | undefined;
    if (m.state === 'FINISHED') ended = this.scheduler.taskFinished(m.taskId, m.result);
    else if (m.state === 'FAILED' || m.state === 'KILLED' || m.state === 'LOST') {
      ended = this.scheduler.taskFailed(
        m.taskId,
        m.error ?? { name: 'TaskFailed', message: `Task ${m.taskId} ended ${m.state}` },
      );
      if (m.state === 'FAILED') {
        this.log.warn(
          `Lost task ${m.taskId} on executor ${m.executorId}: ${m.error?.message ?? m.state}`,
        );
      }
    }
    if (ended && executor) executor.freeCores++;
    if (ended) this.makeOffers();
  }

  override onDisconnected(address: string): void {
    for (const e of this.executors.values()) {
      if (e.address === address) this.removeExecutor(e.id, `Executor ${e.id} disconnected`);
    }
  }

  /** The executor is gone (the master said so, or its connection dropped): rerun its tasks. */
  removeExecutor(executorId: string, reason: string): void {
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
    this.executors.set(m.executorId, {
      id: m.executorId,
      ref,
      address: ctx.senderAddress,
      host: m.hostname,
      cores: m.cores,
      freeCores: m.cores,
    });
    this.log.info(
      `Registered executor ${ref} (${m.hostname}) with ID ${m.executorId}, ${m.cores} core(s)`,
    );
    for (const w of this.firstExecutorWaiters.splice(0)) w();
    queueMicrotask(() => this.makeOffers());
    return RegisteredExecutor({});
  }

  /** Offers every executor's free cores to the scheduler and launches what it places. */
  private makeOffers(): void {
    if (!this.scheduler.hasPending || this.executors.size === 0) return;
    const offers = [...this.executors.values()]
      .filter((e) => e.freeCores > 0)
      .map((e) => ({ executorId: e.id, freeCores: e.freeCores }));
    if (offers.length === 0) return;
    for (const { executorId, task } of this.scheduler.resourceOffers(offers)) {
      const e = this.executors.get(executorId) as ExecutorData;
      if (this.tooLarge(task)) continue;
      e.freeCores--;
      e.ref.send(LaunchTask({ task }));
    }
  }

  /** Spark's check in launchTasks: a task larger than a frame aborts its job with advice. */
  private tooLarge(task: TaskDescription): boolean {
    const size = Buffer.byteLength(JSON.stringify(task));
    if (size < this.maxMessageSize) return false;
    const kill = this.scheduler.abort(
      task.jobId,
      `Serialized task ${task.taskId}:${task.partition} was ${size} bytes, which exceeds max allowed: wick.rpc.message.maxSize (${this.maxMessageSize} bytes). Consider increasing wick.rpc.message.maxSize or using broadcast variables for large values.`,
    );
    for (const k of kill) {
      if (k.taskId === task.taskId) continue;
      const e = this.executors.get(k.executorId);
      e?.ref.send(KillTask({ taskId: k.taskId, reason: 'job aborted' }));
      if (e) e.freeCores++;
    }
    return true;
  }
}
