/**
 * A mock executor for tests of the driver (as Spark's tests use a MockExecutor): a client-mode
 * RpcEnv of the test process whose endpoint records what the driver sends it, registered with the
 * driver. The test reports its tasks' states through `driver`.
 */
import {
  AddFiles,
  KillTask,
  LaunchTask,
  RegisterExecutor,
  StopExecutor,
} from '../../backend/protocol/executor.js';
import type { MessageOf, WireMessage } from '../../backend/protocol/registry.js';
import type { TaskDescription } from '../../backend/protocol/task.js';
import { RpcEndpoint, type RpcEndpointRef, RpcEnv } from '../../backend/rpc/index.js';
import { testProtocol } from './protocol.js';

/** The executor's side of the driver's messages, recorded by kind, in order of arrival. */
export class MockExecutorEndpoint extends RpcEndpoint {
  readonly launched: TaskDescription[] = [];
  readonly kills: MessageOf<typeof KillTask>[] = [];
  /** The files each AddFiles named. */
  readonly addedFiles: MessageOf<typeof AddFiles>['files'][] = [];
  /** The type of every message received, in order. */
  readonly received: string[] = [];
  stops = 0;
  private readonly waiters = new Set<() => boolean>();

  constructor() {
    super();
    this.on(LaunchTask, (msg) => {
      this.received.push(msg.type);
      this.launched.push(msg.task);
      this.changed();
    });
    this.on(AddFiles, (msg) => {
      this.received.push(msg.type);
      this.addedFiles.push(msg.files);
      this.changed();
    });
    this.on(KillTask, (msg) => {
      this.received.push(msg.type);
      this.kills.push(msg);
      this.changed();
    });
    this.on(StopExecutor, () => {
      this.stops++;
      this.changed();
    });
  }

  /**
   * Resolves with what `probe` returns once it is not undefined, checking now and after each
   * message. No deadline of its own: the test's timeout ends a wait that never succeeds.
   */
  when<T>(probe: () => T | undefined): Promise<T> {
    return new Promise((resolve) => {
      const check = (): boolean => {
        const v = probe();
        if (v === undefined) return false;
        this.waiters.delete(check);
        resolve(v);
        return true;
      };
      if (!check()) this.waiters.add(check);
    });
  }

  /** The tasks launched here, once there are at least `n`. */
  launchedAtLeast(n: number): Promise<TaskDescription[]> {
    return this.when(() => (this.launched.length >= n ? this.launched : undefined));
  }

  private changed(): void {
    for (const w of [...this.waiters]) w();
  }
}

export async function registerMockExecutor(
  driverUrl: string,
  id: string,
  cores: number,
  /** Where the mock's RpcEnv goes, for the test to stop. */
  envs: RpcEnv[],
): Promise<{
  env: RpcEnv;
  endpoint: MockExecutorEndpoint;
  driver: RpcEndpointRef;
  reply: WireMessage;
}> {
  const env = await RpcEnv.create({
    protocol: testProtocol,
    name: `mockExecutor${id}`,
    clientMode: true,
  });
  envs.push(env);
  const endpoint = new MockExecutorEndpoint();
  env.setupEndpoint('Executor', endpoint);
  const driver = await env.setupEndpointRefByURI(driverUrl);
  const reply = await driver.ask(
    RegisterExecutor({
      executorId: id,
      executor: endpoint.self.toData(),
      hostname: '127.0.0.1',
      cores,
      logUrls: {},
    }),
  );
  return { env, endpoint, driver, reply };
}
