/**
 * A master and a worker process (1 core) and an application whose one executor runs a script,
 * for the tests of logs read through the master; plus a client env to ask either daemon.
 */
import type { TestContext } from 'node:test';
import { clientEnv } from '../../backend/client/masterConnection.js';
import { WORKER_ENDPOINT } from '../../backend/protocol/endpoints.js';
import { RequestWorkerState } from '../../backend/protocol/worker.js';
import type { RpcEnv } from '../../backend/rpc/index.js';
import {
  type MasterOptions,
  type MasterProcess,
  startMaster,
  startWorker,
  type WorkerProcess,
} from './cluster.js';
import { appDescription, MockApp } from './masterMocks.js';

export async function startLogCluster(
  t: TestContext,
  masterOptions: MasterOptions = {},
): Promise<{ master: MasterProcess; worker: WorkerProcess }> {
  const master = await startMaster(t, masterOptions);
  const worker = await startWorker(t, master.url, { cores: 1 });
  await master.waitForStderr(/Registering worker/);
  return { master, worker };
}

/** Registers an application whose one executor runs `node -e script`. */
export async function runExecutor(t: TestContext, masterUrl: string, script: string) {
  const client = await MockApp.start(t, masterUrl);
  const appId = await client.register(
    appDescription({
      maxCores: 1,
      coresPerExecutor: 1,
      command: { argv: [process.execPath, '-e', script], env: {} },
    }),
  );
  const state = (s: string) =>
    client.endpoint.next('ExecutorUpdated', (m) => m.id === 0 && m.state === s);
  return { appId, state };
}

/** A client-mode env of the test's own, stopped when the test ends. */
export async function testClientEnv(t: TestContext): Promise<RpcEnv> {
  const env = await clientEnv(undefined, 'logTestClient');
  t.after(() => env.stop());
  return env;
}

/** How many log follows the worker serves now. */
export async function workerFollows(env: RpcEnv, worker: WorkerProcess): Promise<number> {
  const ref = env.endpointRef({ address: worker.address, name: WORKER_ENDPOINT });
  return (await ref.ask(RequestWorkerState({}), { timeout: 10_000 })).logFollows ?? -1;
}
