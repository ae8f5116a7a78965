import { access, constants, mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import { DaemonConf } from '../conf/daemon.js';
import type { WickConf } from '../conf/WickConf.js';
import { WorkerWebUI } from '../http/WorkerWebUI.js';
import { WORKER_ENDPOINT, WORKER_SYSTEM } from '../protocol/endpoints.js';
import { wickProtocol } from '../protocol/index.js';
import { type RpcAddress, RpcConf, RpcEnv } from '../rpc/index.js';
import type { Clock } from '../util/clock.js';
import { Worker } from './Worker.js';
import { workerId } from './workerId.js';

export interface RunningWorker {
  env: RpcEnv;
  worker: Worker;
  /** The worker's web UI (the dashboard's worker page, /json, /log). */
  webUi: WorkerWebUI;
  stop(): Promise<void>;
}

/**
 * Starts a worker: checks its work dir, binds its RpcEnv and its web UI port, and registers the
 * Worker endpoint.
 */
export async function startWorker(
  conf: WickConf,
  masters: string[],
  options: { clock?: Clock; exit?: (code: number, reason: string) => void } = {},
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
  let webUi: WorkerWebUI;
  try {
    webUi = await WorkerWebUI.start(
      host,
      conf.get(DaemonConf.workerUiPort),
      conf.get(RpcConf.portMaxRetries),
    );
  } catch (err) {
    await env.stop();
    throw err;
  }
  const uiPort = webUi.port;
  const worker = new Worker({
    conf,
    masterAddresses: masters,
    cores: conf.get(DaemonConf.workerCores),
    memoryMB: conf.get(DaemonConf.workerMemory),
    workDir,
    webUiPort: uiPort,
    webUiUrl: `http://${addr.host}:${uiPort}`,
    workerId: workerId(Date.now(), addr.host, addr.port),
    localDirs: conf
      .get(DaemonConf.localDirs)
      .split(',')
      .map((d) => d.trim())
      .filter(Boolean),
    clock: options.clock,
    exit: options.exit,
  });
  env.setupEndpoint(WORKER_ENDPOINT, worker);
  webUi.attach(env, worker);
  return {
    env,
    worker,
    webUi,
    async stop() {
      await webUi.stop();
      await env.stop();
    },
  };
}
