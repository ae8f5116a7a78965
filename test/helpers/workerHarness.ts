/**
 * A real Worker endpoint in the test process, on its own RpcEnv on loopback, driven by a ManualClock
 * (registration retries, heartbeats, cleanup and driver back-off move only when the test says),
 * against mock masters: RpcEnvs of the test process with an endpoint named "Master" that records
 * every message and answers registration as told (Spark's WorkerSuite with a mock master).
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { WickConf } from '../../backend/conf/WickConf.js';
import type { ApplicationDescription } from '../../backend/protocol/common.js';
import {
  LaunchDriver,
  LaunchExecutor,
  MasterInStandby,
  RegisteredWorker,
  RegisterWorkerFailed,
} from '../../backend/protocol/deploy.js';
import { WORKER_ENDPOINT, WORKER_SYSTEM } from '../../backend/protocol/endpoints.js';
import type { MessageOf } from '../../backend/protocol/registry.js';
import { RequestWorkerState, type WorkerStateResponse } from '../../backend/protocol/worker.js';
import { clusterRpcAuth, type RpcEndpointRef, RpcEnv } from '../../backend/rpc/index.js';
import { ManualClock } from '../../backend/util/clock.js';
import { setLogLevel, setLogSink } from '../../backend/util/log.js';
import { Worker } from '../../backend/worker/Worker.js';
import { workerId } from '../../backend/worker/workerId.js';
import { testProtocol } from './protocol.js';
import { Recorder } from './recorder.js';

export type Msg = ReturnType<Recorder['all']>[number];

/**
 * Every line logged in this process, kept for assertions instead of printed (WICK_TEST_LOGS=1
 * prints them too): the worker's log is how it reports what it ignored or gave up on.
 */
export const logLines: string[] = [];
setLogLevel('INFO');
setLogSink((line) => {
  logLines.push(line);
  if (process.env.WICK_TEST_LOGS === '1') process.stderr.write(`${line}\n`);
});

/** Resolves with the first log line from index `from` on that matches, waiting for it. */
export async function waitForLog(pattern: RegExp, from = 0, signal?: AbortSignal): Promise<string> {
  for (;;) {
    const line = logLines.slice(from).find((l) => pattern.test(l));
    if (line) return line;
    if (signal?.aborted) throw new Error(`gave up waiting for a log line matching ${pattern}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** How a mock master answers RegisterWorker. */
export type RegisterMode = 'accept' | 'ignore' | 'fail' | 'standby';

export class MockMaster {
  mode: RegisterMode = 'accept';
  failMessage = 'Duplicate worker ID';
  readonly webUiUrl: string;

  private constructor(
    readonly env: RpcEnv,
    readonly rec: Recorder,
    readonly ref: RpcEndpointRef,
  ) {
    this.webUiUrl = `http://127.0.0.1:${(env.rpcAddress?.port ?? 0) + 1}`;
    rec.onMessage = (m) => {
      if (m.type !== 'RegisterWorker') return;
      const worker = this.worker();
      switch (this.mode) {
        case 'accept':
          worker.send(
            RegisteredWorker({
              master: ref.toData(),
              masterWebUiUrl: this.webUiUrl,
              masterAddress: m.masterAddress as string,
            }),
          );
          break;
        case 'fail':
          worker.send(RegisterWorkerFailed({ message: this.failMessage }));
          break;
        case 'standby':
          worker.send(MasterInStandby({}));
          break;
        case 'ignore':
          break;
      }
    };
  }

  /**
   * A mock master on loopback (port 0: a free one), stopped when the test ends; open, or holding
   * the cluster `secret`.
   */
  static async start(t: TestContext, port = 0, secret?: string): Promise<MockMaster> {
    const env = await RpcEnv.create({
      protocol: testProtocol,
      name: 'mockMaster',
      host: '127.0.0.1',
      port,
      auth: clusterRpcAuth(secret),
    });
    t.after(() => env.stop());
    const rec = new Recorder();
    const ref = env.setupEndpoint('Master', rec);
    return new MockMaster(env, rec, ref);
  }

  get address(): string {
    return this.env.address;
  }

  get port(): number {
    return this.env.rpcAddress?.port as number;
  }

  /** wick://host:port, as the worker names its active master. */
  get url(): string {
    return `wick://${this.env.address}`;
  }

  /** A ref to the Worker endpoint that registered last. */
  worker(): RpcEndpointRef {
    const reg = this.rec.all('RegisterWorker').at(-1);
    if (!reg) throw new Error('no worker registered with this mock master');
    // Over the connection it registered on, as a master talks to its workers.
    const via = this.rec.lastSender.get('RegisterWorker')?.connection;
    const data = reg.worker as { address: string; name: string };
    return via ? this.env.refOver(via, data.name) : this.env.endpointRef(data);
  }

  /** Sends LaunchExecutor as this master (or as `masterUrl`, to impersonate another one). */
  launchExecutor(
    appId: string,
    execId: number,
    appDesc: ApplicationDescription,
    opts: { cores?: number; memory?: number; masterUrl?: string } = {},
  ): void {
    this.worker().send(
      LaunchExecutor({
        masterUrl: opts.masterUrl ?? this.url,
        appId,
        execId,
        appDesc,
        cores: opts.cores ?? 1,
        memory: opts.memory ?? 128,
      }),
    );
  }

  /** The ExecutorStateChanged for appId/execId in `state`, waiting for it. */
  executorState(appId: string, execId: number, state: string, from = 0): Promise<Msg> {
    return this.rec.next(
      'ExecutorStateChanged',
      (m) => m.appId === appId && m.execId === execId && m.state === state,
      from,
    );
  }

  /** Launches an executor and waits until the worker reports it RUNNING. */
  async launchRunning(
    appId: string,
    execId: number,
    appDesc: ApplicationDescription,
    opts: { cores?: number; memory?: number } = {},
  ): Promise<Msg> {
    const from = this.rec.mark;
    this.launchExecutor(appId, execId, appDesc, opts);
    return this.executorState(appId, execId, 'RUNNING', from);
  }
}

export interface TestWorker {
  env: RpcEnv;
  worker: Worker;
  clock: ManualClock;
  root: string;
  workDir: string;
  localDir: string;
  /** exit(code, reason) calls: the worker asked to end the process. */
  exits: { code: number; reason: string }[];
  /** Resolves once the worker's inbox has handled everything posted to it before. */
  barrier(): Promise<MessageOf<typeof WorkerStateResponse>>;
  state(): Promise<MessageOf<typeof WorkerStateResponse>>;
}

export interface TestWorkerOptions {
  masters: string[];
  conf?: Record<string, string>;
  cores?: number;
  memoryMB?: number;
  /** Where time starts on the worker's ManualClock (default: now). */
  startTime?: number;
  /** The cluster secret the worker holds (default: none, the worker runs open). */
  secret?: string;
}

/**
 * Starts a Worker in this process. Its env uses the system clock (so that RPC timeouts never fire
 * when the test moves the worker's clock); the Worker itself gets a ManualClock and random() = 0.5,
 * so that every registration retry waits exactly its configured interval.
 */
export async function startTestWorker(
  t: TestContext,
  opts: TestWorkerOptions,
): Promise<TestWorker> {
  const root = mkdtempSync(join(tmpdir(), 'wick-worker-'));
  const workDir = join(root, 'work');
  const localDir = join(root, 'local');
  mkdirSync(workDir);
  const conf = new WickConf({ 'wick.worker.killTimeout': '2s', ...opts.conf });
  const env = await RpcEnv.create({
    protocol: testProtocol,
    name: WORKER_SYSTEM,
    host: '127.0.0.1',
    port: 0,
    conf,
    auth: clusterRpcAuth(opts.secret),
  });
  const clock = new ManualClock(opts.startTime ?? Date.now());
  const exits: { code: number; reason: string }[] = [];
  const port = env.rpcAddress?.port as number;
  const worker = new Worker({
    conf,
    masterAddresses: opts.masters.map((m) => m.replace(/^wick:\/\//, '')),
    cores: opts.cores ?? 4,
    memoryMB: opts.memoryMB ?? 2048,
    workDir,
    webUiPort: 8081,
    webUiUrl: 'http://127.0.0.1:8081',
    workerId: workerId(Date.now(), '127.0.0.1', port),
    localDirs: [localDir],
    clock,
    random: () => 0.5,
    exit: (code, reason) => exits.push({ code, reason }),
  });
  t.after(async () => {
    await env.stop();
    rmSync(root, { recursive: true, force: true });
  });
  env.setupEndpoint(WORKER_ENDPOINT, worker);
  const state = () => worker.self.ask(RequestWorkerState({}));
  return { env, worker, clock, root, workDir, localDir, exits, barrier: state, state };
}

/** A worker registered with `master` (which must accept), heartbeating on its ManualClock. */
export async function registeredWorker(
  t: TestContext,
  master: MockMaster,
  opts: Omit<TestWorkerOptions, 'masters'> = {},
): Promise<TestWorker> {
  const from = master.rec.mark;
  const w = await startTestWorker(t, { masters: [master.url], ...opts });
  await master.rec.next('WorkerLatestState', undefined, from);
  return w;
}

/** An application whose executor runs `argv`. */
export function app(argv: string[], fields: Partial<ApplicationDescription> = {}) {
  return {
    name: 'worker-test-app',
    user: 'tester',
    memoryPerExecutorMB: 128,
    command: { argv, env: {} },
    ...fields,
  } satisfies ApplicationDescription;
}

/** node -e `script` with extra arguments. */
export function nodeApp(script: string, ...args: string[]) {
  return app([process.execPath, '-e', script, ...args]);
}

/**
 * LaunchDriver for `appPath`, run as `argv` ({{USER_APP}} is the worker's copy of it), with 64 MB
 * and 1 core.
 */
export function driverLaunch(
  driverId: string,
  appPath: string,
  { argv = [process.execPath, '{{USER_APP}}'], supervise = false } = {},
) {
  return LaunchDriver({
    driverId,
    driverDesc: { appPath, mem: 64, cores: 1, supervise, command: { argv, env: {} } },
  });
}
