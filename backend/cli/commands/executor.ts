import type { Command } from 'commander';
import { CoarseGrainedExecutorBackend } from '../../app/executor/CoarseGrainedExecutorBackend.js';
import { WorkerWatcher } from '../../app/WorkerWatcher.js';
import { RpcEnv } from '../../rpc/index.js';
import { getLogger } from '../../util/log.js';

const log = getLogger('CoarseGrainedExecutorBackend');

/** `wick executor`: the command a worker launches for a Wick application's executor. */
export function registerExecutor(program: Command): void {
  program
    .command('executor')
    .description('Run an executor for a Wick application (workers launch this; you do not)')
    .requiredOption('--driver-url <url>', "the driver endpoint's wick:// URI")
    .requiredOption('--executor-id <id>', 'this executor’s id')
    .requiredOption('--hostname <host>', 'the host it runs on')
    .requiredOption('--cores <n>', 'tasks to run at once')
    .requiredOption('--app-id <id>', 'the application id')
    .option('--worker-url <url>', 'exit when this worker goes away')
    .action(
      async (o: {
        driverUrl: string;
        executorId: string;
        hostname: string;
        cores: string;
        appId: string;
        workerUrl?: string;
      }) => {
        const cores = Number(o.cores);
        if (!Number.isInteger(cores) || cores < 1)
          throw new Error(`--cores must be a whole number ≥ 1, got "${o.cores}"`);
        // A worker passes its environment on: the secret of a cluster that authenticates
        // (WICK_AUTH_SECRET) reaches its executors that way, and turns authentication on.
        const env = await RpcEnv.create({ name: 'wickExecutor', clientMode: true });
        let exiting = false;
        const exit = (code: number, reason: string) => {
          if (exiting) return;
          exiting = true;
          (code === 0 ? log.info.bind(log) : log.error.bind(log))(reason);
          void env.stop().finally(() => process.exit(code));
        };
        process.once('SIGTERM', () => exit(143, 'Received SIGTERM'));
        process.once('SIGINT', () => exit(130, 'Received SIGINT'));
        if (o.workerUrl)
          env.setupEndpoint(WorkerWatcher.ENDPOINT_NAME, new WorkerWatcher(o.workerUrl, exit));
        env.setupEndpoint(
          CoarseGrainedExecutorBackend.ENDPOINT_NAME,
          new CoarseGrainedExecutorBackend({ ...o, cores, exit }),
        );
        await env.awaitTermination();
      },
    );
}
