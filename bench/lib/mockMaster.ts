/**
 * A master as a worker sees one, in the benchmark process (for `launch` and `logs`): it accepts a
 * worker's registration, then lets the benchmark send it LaunchExecutor and wait for the
 * ExecutorStateChanged messages the worker sends back. Nothing is scheduled: the benchmark decides
 * what runs. Like a real master it holds the cluster secret (the run's, auth.ts), and answers and
 * commands the worker over the connection the worker opened: a worker takes a master's messages
 * over no other (backend/worker/fromMaster.ts).
 */
import type { ApplicationDescription, ExecutorState } from '../../backend/protocol/common.js';
import {
  DriverStateChanged,
  ExecutorStateChanged,
  Heartbeat,
  LaunchExecutor,
  RegisteredWorker,
  RegisterWorker,
  WorkerLatestState,
} from '../../backend/protocol/deploy.js';
import { wickProtocol } from '../../backend/protocol/index.js';
import {
  clusterRpcAuth,
  RpcEndpoint,
  type RpcEndpointRef,
  RpcEnv,
} from '../../backend/rpc/index.js';
import { benchClusterSecret } from './auth.js';

export interface StateChange {
  appId: string;
  execId: number;
  state: ExecutorState;
  message?: string;
  exitStatus?: number;
  /** performance.timeOrigin + performance.now() when it arrived here. */
  at: number;
}

class MockMasterEndpoint extends RpcEndpoint {
  worker: RpcEndpointRef | undefined;
  private workerWaiters: ((ref: RpcEndpointRef) => void)[] = [];
  private readonly changes = new Map<string, StateChange>();
  private waiters = new Map<string, ((c: StateChange) => void)[]>();

  constructor() {
    super();
    this.on(RegisterWorker, (msg, sender) => {
      // As the real master answers (master/handlers/workers.ts): over the connection the worker
      // registered on. A worker takes its master's messages only over a connection it dialled.
      const ref = sender.connection
        ? this.rpcEnv.refOver(sender.connection, msg.worker.name)
        : this.rpcEnv.endpointRef(msg.worker);
      this.worker = ref;
      ref.send(
        RegisteredWorker({
          master: this.self.toData(),
          masterWebUiUrl: 'http://127.0.0.1:0',
          masterAddress: this.rpcEnv.address,
        }),
      );
      for (const w of this.workerWaiters) w(ref);
      this.workerWaiters = [];
    });
    this.on(ExecutorStateChanged, (msg) => {
      const c: StateChange = {
        appId: msg.appId,
        execId: msg.execId,
        state: msg.state,
        message: msg.message,
        exitStatus: msg.exitStatus,
        at: performance.timeOrigin + performance.now(),
      };
      const key = `${c.appId}/${c.execId}/${c.state}`;
      this.changes.set(key, c);
      for (const w of this.waiters.get(key) ?? []) w(c);
      this.waiters.delete(key);
    });
    // A worker's other messages to its master: nothing to do.
    this.on(Heartbeat, () => {});
    this.on(WorkerLatestState, () => {});
    this.on(DriverStateChanged, () => {});
  }

  registered(): Promise<RpcEndpointRef> {
    if (this.worker) return Promise.resolve(this.worker);
    return new Promise((resolve) => this.workerWaiters.push(resolve));
  }

  stateChange(appId: string, execId: number, state: ExecutorState): Promise<StateChange> {
    const key = `${appId}/${execId}/${state}`;
    const seen = this.changes.get(key);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => {
      const list = this.waiters.get(key) ?? [];
      list.push(resolve);
      this.waiters.set(key, list);
    });
  }
}

export class MockMaster {
  private constructor(
    readonly env: RpcEnv,
    private readonly endpoint: MockMasterEndpoint,
  ) {}

  static async start(): Promise<MockMaster> {
    const env = await RpcEnv.create({
      protocol: wickProtocol,
      name: 'benchMaster',
      host: '127.0.0.1',
      port: 0,
      // The run's cluster secret, which the worker it launches inherits (auth.ts).
      auth: clusterRpcAuth(benchClusterSecret()),
    });
    const endpoint = new MockMasterEndpoint();
    env.setupEndpoint('Master', endpoint);
    return new MockMaster(env, endpoint);
  }

  get address(): string {
    return this.env.address;
  }

  /** Resolves with the worker's ref once it has registered. */
  worker(timeoutMs = 30_000): Promise<RpcEndpointRef> {
    return withTimeout(this.endpoint.registered(), timeoutMs, 'the worker did not register');
  }

  launch(
    appId: string,
    execId: number,
    appDesc: ApplicationDescription,
    cores = 1,
    memory = 64,
  ): void {
    const worker = this.endpoint.worker;
    if (!worker) throw new Error('no worker has registered');
    worker.send(
      LaunchExecutor({
        masterUrl: `wick://${this.env.address}`,
        appId,
        execId,
        appDesc,
        cores,
        memory,
      }),
    );
  }

  /** Resolves when the worker reports this state for the executor (or has already). */
  stateChange(
    appId: string,
    execId: number,
    state: ExecutorState,
    timeoutMs = 60_000,
  ): Promise<StateChange> {
    return withTimeout(
      this.endpoint.stateChange(appId, execId, state),
      timeoutMs,
      `executor ${appId}/${execId} did not reach ${state}`,
    );
  }

  /** Resolves with the executor's final state (EXITED, FAILED, KILLED or LOST). */
  finished(appId: string, execId: number, timeoutMs = 120_000): Promise<StateChange> {
    const states: ExecutorState[] = ['EXITED', 'FAILED', 'KILLED', 'LOST'];
    return withTimeout(
      Promise.race(states.map((s) => this.endpoint.stateChange(appId, execId, s))),
      timeoutMs,
      `executor ${appId}/${execId} did not finish`,
    );
  }

  stop(): Promise<void> {
    return this.env.stop();
  }
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} within ${ms} ms`)), ms);
    p.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}
