import { access, constants, mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import { DaemonConf } from '../conf/daemon.js';
import type { WickConf } from '../conf/WickConf.js';
import { WorkerConf } from '../conf/worker.js';
import { WORKER_ENDPOINT, WORKER_SYSTEM } from '../protocol/endpoints.js';
import { wickProtocol } from '../protocol/index.js';
import { type RpcAddress, RpcConf, RpcEnv } from '../rpc/index.js';
import type { WireSecurity } from '../rpc/tls/WireSecurity.js';
import type { Clock } from '../util/clock.js';
import { discoverWorkerResources } from './resources/discoverResources.js';
import { chooseWorkerSandbox } from './sandbox/chooseWorkerSandbox.js';
import { startShuffleService } from './shuffleService.js';
import { Worker } from './Worker.js';
import { workerId } from './workerId.js';

/** The worker's web UI, as startWorker runs it (backend/http's WorkerWebUI). */
export interface WorkerWebUiServer {
  readonly port: number;
  /** `https` when it serves TLS. */
  readonly scheme?: 'http' | 'https';
  /** Joins the worker's RpcEnv once the Worker endpoint is set up. */
  attach(env: RpcEnv, worker: Worker): void;
  stop(): Promise<void>;
}

/**
 * Starts the web UI on `port` (0: a free one; taken: the next, up to maxRetries times). Given by
 * the caller: the web UI knows nothing of the Worker class, nor the worker of the web UI's
 * (WorkerWebUI.start is one).
 */
export type WorkerWebUiStarter = (
  host: string,
  port: number,
  maxRetries: number,
  /** The worker's TLS (its RpcEnv's), so that its web UI serves the same certificate. */
  security?: WireSecurity,
) => Promise<WorkerWebUiServer>;

export interface RunningWorker {
  env: RpcEnv;
  worker: Worker;
  /** The worker's web UI (the dashboard's worker page, /json, /log). */
  webUi: WorkerWebUiServer;
  stop(): Promise<void>;
}

/**
 * Starts a worker: checks its work dir, binds its RpcEnv and its web UI port, and registers the
 * Worker endpoint.
 */
export async function startWorker(
  conf: WickConf,
  masters: string[],
  options: {
    webUi: WorkerWebUiStarter;
    clock?: Clock;
    exit?: (code: number, reason: string) => void;
  },
): Promise<RunningWorker> {
  // A daemon has time at start-up: no peer's first message waits for its validator to compile.
  wickProtocol.precompile(() => true);
  const workDir = resolve(conf.get(DaemonConf.workerDir));
  try {
    await mkdir(workDir, { recursive: true });
    await access(workDir, constants.W_OK);
  } catch (err) {
    throw new Error(
      `Work dir ${workDir} is not writable (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); choose another with --work-dir`,
    );
  }
  const localDirs = conf
    .get(DaemonConf.localDirs)
    .split(',')
    .map((d) => d.trim())
    .filter(Boolean);
  // Before any port is bound: wick.executor.sandbox=bwrap without a usable bwrap refuses to start.
  const sandbox = chooseWorkerSandbox(conf, workDir, localDirs);
  // Before any port is bound too: a worker whose GPUs cannot be found does not start.
  const customResources = await discoverWorkerResources(conf);
  const host = conf.get(DaemonConf.workerHost);
  const env = await RpcEnv.create({
    protocol: wickProtocol,
    name: WORKER_SYSTEM,
    host,
    port: conf.get(DaemonConf.workerPort),
    conf,
    clock: options.clock,
  });
  const addr = env.rpcAddress as RpcAddress;
  let webUi: WorkerWebUiServer;
  try {
    webUi = await options.webUi(
      host,
      conf.get(DaemonConf.workerUiPort),
      conf.get(RpcConf.portMaxRetries),
      env.security,
    );
  } catch (err) {
    await env.stop();
    throw err;
  }
  const uiPort = webUi.port;
  // Before the Worker, which tells its executors the service's address; it reads the Worker's
  // application dirs once set up (none exist before the Worker launches an executor).
  let appDirs: Worker['appDirectories'] | undefined;
  let shuffleService: RpcEnv | undefined;
  if (conf.get(WorkerConf.shuffleServiceEnabled)) {
    try {
      shuffleService = await startShuffleService(conf, host, env.clusterSecret, {
        existing: (appId) => appDirs?.existing(appId) ?? [],
      });
    } catch (err) {
      await Promise.all([webUi.stop(), env.stop()]);
      throw new Error(
        `Cannot start the external shuffle service (wick.shuffle.service.enabled) on port ${conf.get(WorkerConf.shuffleServicePort)}: ${(err as Error).message}; choose another with wick.shuffle.service.port`,
        { cause: err },
      );
    }
  }
  const worker = new Worker({
    conf,
    masterAddresses: masters,
    cores: conf.get(DaemonConf.workerCores),
    memoryMB: conf.get(DaemonConf.workerMemory),
    workDir,
    webUiPort: uiPort,
    webUiUrl: `${webUi.scheme ?? 'http'}://${addr.host}:${uiPort}`,
    workerId: workerId(Date.now(), addr.host, addr.port),
    localDirs,
    sandbox,
    clock: options.clock,
    exit: options.exit,
    shuffleServiceAddress: shuffleService?.address,
    customResources,
  });
  appDirs = worker.appDirectories;
  env.setupEndpoint(WORKER_ENDPOINT, worker);
  webUi.attach(env, worker);
  return {
    env,
    worker,
    webUi,
    async stop() {
      await webUi.stop();
      await env.stop();
      await shuffleService?.stop();
    },
  };
}
