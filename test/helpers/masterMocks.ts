/**
 * Mock workers and applications for tests of a real master process (the way Spark's MasterSuite
 * uses its MockWorker): each is a real RpcEnv on loopback in the test process with an endpoint
 * that records every message the master sends and answers as the real peer would, so a test
 * drives the protocol by hand and waits for the master's messages rather than sleeping. A worker
 * or an application is identified by its RpcEnv's address, so each mock has its own env.
 */
import type { TestContext } from 'node:test';
import { idTimestamp } from '../../backend/master/ids.js';
import {
  ExecutorRegistered,
  MasterChangeAcknowledged,
  RegisterApplication,
  RegisteredApplication,
  UnregisterApplication,
} from '../../backend/protocol/app.js';
import type {
  AppFailure,
  ApplicationDescription,
  ExecutorState,
} from '../../backend/protocol/common.js';
import {
  DriverStateChanged,
  ExecutorStateChanged,
  Heartbeat,
  KillExecutor,
  LaunchDriver,
  LaunchExecutor,
  MasterChanged,
  ReconnectWorker,
  RegisterWorker,
  WorkerLatestState,
  WorkerSchedulerStateResponse,
} from '../../backend/protocol/deploy.js';
import type { MessageOf } from '../../backend/protocol/registry.js';
import { RequestMasterState } from '../../backend/protocol/state.js';
import type { RpcEndpointRef, RpcEnv } from '../../backend/rpc/index.js';
import { addressOf, type Msg, Recorder, serverEnv } from './recorder.js';

export {
  addressOf,
  appIn,
  connectClient,
  driverIn,
  type MasterClient,
  type MasterState,
  Recorder,
  workerIn,
} from './recorder.js';

export interface MockWorkerOptions {
  cores?: number;
  memory?: number;
  /** Default: worker-<now>-127.0.0.1-<port>, as a real worker names itself. */
  id?: string;
  /** RPC port (default 0: a free one); a worker restarted on the same port reuses it. */
  port?: number;
  /** Heartbeat every this many ms (default: none). */
  heartbeatMs?: number;
  /** Answer MasterChanged with WorkerSchedulerStateResponse (default true). */
  answerMasterChanged?: boolean;
  /** Register again on ReconnectWorker (default true). */
  reconnect?: boolean;
}

/**
 * A worker as the master sees one: it registers, heartbeats, and keeps track of the executors and
 * drivers the master launches on it, so that it can report them (WorkerLatestState,
 * WorkerSchedulerStateResponse) as a real worker does. It never starts a process.
 */
export class MockWorker {
  readonly executors = new Map<string, { appId: string; execId: number; cores: number }>();
  readonly drivers = new Set<string>();
  answerMasterChanged: boolean;
  reconnect: boolean;
  private timer: NodeJS.Timeout | undefined;

  private constructor(
    readonly env: RpcEnv,
    readonly endpoint: Recorder,
    public master: RpcEndpointRef,
    readonly id: string,
    readonly cores: number,
    readonly memory: number,
    opts: MockWorkerOptions,
  ) {
    this.answerMasterChanged = opts.answerMasterChanged ?? true;
    this.reconnect = opts.reconnect ?? true;
    endpoint.answer(LaunchExecutor, ({ appId, execId, cores }) => {
      this.executors.set(`${appId}/${execId}`, { appId, execId, cores });
    });
    endpoint.answer(KillExecutor, (m) => this.executors.delete(`${m.appId}/${m.execId}`));
    endpoint.answer(LaunchDriver, (m) => this.drivers.add(m.driverId));
    endpoint.answer(MasterChanged, (m) => {
      if (!this.answerMasterChanged) return;
      this.master = this.env.endpointRef(m.master);
      this.master.send(
        WorkerSchedulerStateResponse({
          id: this.id,
          executors: this.executorDescriptions(),
          driverIds: [...this.drivers],
        }),
      );
    });
    endpoint.answer(ReconnectWorker, () => {
      if (this.reconnect) this.register();
    });
  }

  static async start(
    t: TestContext,
    masterUrl: string,
    opts: MockWorkerOptions = {},
  ): Promise<MockWorker> {
    const env = await serverEnv(t, 'mockWorker', opts.port);
    const endpoint = new Recorder();
    env.setupEndpoint('Worker', endpoint);
    const master = await env.setupEndpointRef(addressOf(masterUrl), 'Master');
    const port = env.rpcAddress?.port as number;
    const id = opts.id ?? `worker-${idTimestamp(Date.now())}-127.0.0.1-${port}`;
    const w = new MockWorker(env, endpoint, master, id, opts.cores ?? 4, opts.memory ?? 4096, opts);
    t.after(() => w.stopHeartbeats());
    if (opts.heartbeatMs) w.startHeartbeats(opts.heartbeatMs);
    return w;
  }

  get address(): string {
    return this.env.address;
  }

  get port(): number {
    return this.env.rpcAddress?.port as number;
  }

  /** Sends RegisterWorker (with another id if given). */
  register(id = this.id): void {
    this.master.send(
      RegisterWorker({
        id,
        host: '127.0.0.1',
        port: this.port,
        worker: this.endpoint.self.toData(),
        cores: this.cores,
        memory: this.memory,
        workerWebUiUrl: `http://127.0.0.1:${this.port + 1}`,
        masterAddress: this.master.address,
      }),
    );
  }

  /** Registers and resolves with the master's answer (RegisteredWorker or RegisterWorkerFailed). */
  async registerAndWait(id = this.id): Promise<Msg> {
    const from = this.endpoint.mark;
    this.register(id);
    return Promise.race([
      this.endpoint.next('RegisteredWorker', undefined, from),
      this.endpoint.next('RegisterWorkerFailed', undefined, from),
    ]);
  }

  heartbeat(id = this.id): void {
    this.master.send(Heartbeat({ workerId: id, worker: this.endpoint.self.toData() }));
  }

  startHeartbeats(ms: number): void {
    this.stopHeartbeats();
    this.timer = setInterval(() => {
      if (!this.env.isStopped) this.heartbeat();
    }, ms);
  }

  stopHeartbeats(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  executorStateChanged(
    appId: string,
    execId: number,
    state: ExecutorState,
    exitStatus?: number,
    message?: string,
  ): void {
    if (state !== 'LAUNCHING' && state !== 'RUNNING') this.executors.delete(`${appId}/${execId}`);
    this.master.send(ExecutorStateChanged({ appId, execId, state, exitStatus, message }));
  }

  driverStateChanged(
    driverId: string,
    state: MessageOf<typeof DriverStateChanged>['state'],
    exception?: string,
  ): void {
    if (state !== 'SUBMITTED' && state !== 'RUNNING' && state !== 'RELAUNCHING') {
      this.drivers.delete(driverId);
    }
    this.master.send(DriverStateChanged({ driverId, state, exception }));
  }

  /** WorkerLatestState with what this mock runs plus `extra`. */
  sendLatestState(
    extra: { executors?: { appId: string; execId: number }[]; driverIds?: string[] } = {},
  ): void {
    this.master.send(
      WorkerLatestState({
        id: this.id,
        executors: [
          ...this.executorDescriptions(),
          ...(extra.executors ?? []).map((e) => ({ ...e, cores: 1, state: 'RUNNING' as const })),
        ],
        driverIds: [...this.drivers, ...(extra.driverIds ?? [])],
      }),
    );
  }

  /**
   * Resolves once the master has handled everything this mock sent before: an ask travels the
   * same connection and the master handles its messages in order, and whatever the master sent
   * this env before its reply arrives before the reply.
   */
  async barrier(): Promise<void> {
    await this.master.ask(RequestMasterState({}));
  }

  /** Stops the env: the master sees the worker disconnect. */
  async stop(): Promise<void> {
    this.stopHeartbeats();
    await this.env.stop();
  }

  private executorDescriptions() {
    return [...this.executors.values()].map((e) => ({ ...e, state: 'RUNNING' as const }));
  }
}

/** An application description that asks little, with overrides. */
export function appDescription(
  fields: Partial<ApplicationDescription> = {},
): ApplicationDescription {
  return {
    name: 'mock-app',
    user: 'tester',
    memoryPerExecutorMB: 256,
    command: { argv: ['node', '-e', 'setTimeout(() => {}, 60000)'], env: {} },
    ...fields,
  };
}

/** An application's client (Spark's StandaloneAppClient) with an endpoint that records. */
export class MockApp {
  appId = '';
  answerMasterChanged = true;

  private constructor(
    readonly env: RpcEnv,
    readonly endpoint: Recorder,
    public master: RpcEndpointRef,
  ) {
    endpoint.answer(MasterChanged, (m) => {
      if (!this.answerMasterChanged) return;
      this.master = this.env.endpointRef(m.master);
      this.master.send(MasterChangeAcknowledged({ appId: this.appId }));
    });
  }

  /** A listening env, so that a restarted master can reach it. */
  static async start(t: TestContext, masterUrl: string): Promise<MockApp> {
    const env = await serverEnv(t, 'mockApp');
    const endpoint = new Recorder();
    env.setupEndpoint('AppClient', endpoint);
    const master = await env.setupEndpointRef(addressOf(masterUrl), 'Master');
    return new MockApp(env, endpoint, master);
  }

  /** Registers and resolves with the id the master gave. */
  async register(desc: ApplicationDescription = appDescription()): Promise<string> {
    const from = this.endpoint.mark;
    this.master.send(
      RegisterApplication({ appDescription: desc, driver: this.endpoint.self.toData() }),
    );
    const reply = await this.endpoint.next(RegisteredApplication, undefined, from);
    this.appId = reply.appId;
    return this.appId;
  }

  unregister(failure?: AppFailure): void {
    this.master.send(
      UnregisterApplication(failure ? { appId: this.appId, failure } : { appId: this.appId }),
    );
  }

  /** Resolves once the master has handled everything this app sent before. */
  async barrier(): Promise<void> {
    await this.master.ask(RequestMasterState({}));
  }

  /** What a driver says once an executor has registered with it. */
  executorRegistered(execId: number): void {
    this.master.send(ExecutorRegistered({ execId }));
  }

  /** Stops the env: the master sees the application disconnect. */
  stop(): Promise<void> {
    return this.env.stop();
  }
}
