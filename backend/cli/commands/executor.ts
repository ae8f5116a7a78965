import { availableParallelism } from 'node:os';
import { Command } from 'commander';
import { executorAuth } from '../../app/driver/driverAuth.js';
import { CoarseGrainedExecutorBackend } from '../../app/executor/CoarseGrainedExecutorBackend.js';
import { prestartTaskPool } from '../../app/executor/taskPool.js';
import { WorkerWatcher } from '../../app/WorkerWatcher.js';
import { wickProtocol } from '../../protocol/index.js';
import { RpcEnv } from '../../rpc/index.js';
import { firstLine } from '../../util/firstLine.js';
import { getLogger } from '../../util/log.js';

const log = getLogger('CoarseGrainedExecutorBackend');

/** A standby's launch: what the worker would have spawned (backend/worker/process/prestart.ts). */
interface StandbyLaunch {
  argv: string[];
  cwd: string;
  env: Record<string, string>;
}

/**
 * `wick executor`: the command a worker launches for a Wick application's executor; and
 * `wick executor-standby`, the same code loaded ahead, waiting for the launch it becomes.
 */
export function registerExecutor(program: Command): void {
  program
    .command('executor-standby', { hidden: true })
    .description('Wait, loaded, for the executor launch a worker hands over on stdin')
    .option('--threads <n>', 'task threads to start while waiting', '1')
    .option('--memory <MiB>', 'the memory of the executor it will most likely become')
    .argument('[room]', 'blank space for the process title to take over')
    .action(async (_room: string | undefined, o: { threads: string; memory?: string }) => {
      // Idle until the launch: start the task threads, and compile what an executor's first
      // messages need.
      const threads = Number(o.threads);
      if (!Number.isInteger(threads) || threads < 1)
        throw new Error(`--threads must be a whole number ≥ 1, got "${o.threads}"`);
      prestartTaskPool(Math.min(threads, availableParallelism()), memoryOption(o.memory));
      wickProtocol.precompile((boundary: string) => /Executor|endpoint verifier/.test(boundary));
      // The command it becomes, built ahead too (commander's options: ~6 ms at a launch).
      const executor = new Command('wick');
      registerExecutor(executor);
      const line = await firstLine(process.stdin);
      // No line: the worker stopped, or discarded this standby.
      if (line === undefined) process.exit(0);
      const launch = parseLaunch(line);
      process.chdir(launch.cwd);
      Object.assign(process.env, launch.env);
      // What `ps` shows: the command line this process would have had, spawned fresh.
      process.title = launch.argv.join(' ');
      await executor.parseAsync(launch.argv);
    });

  program
    .command('executor')
    .description('Run an executor for a Wick application (workers launch this; you do not)')
    .requiredOption('--driver-url <url>', "the driver endpoint's wick:// URI")
    .requiredOption('--executor-id <id>', 'this executor’s id')
    .requiredOption('--hostname <host>', 'the host it runs on')
    .requiredOption('--cores <n>', 'tasks to run at once')
    .requiredOption('--app-id <id>', 'the application id')
    .option('--worker-url <url>', 'exit when this worker goes away')
    .option('--memory <MiB>', "the executor's memory, shared out between its task threads' heaps")
    .action(
      async (o: {
        driverUrl: string;
        executorId: string;
        hostname: string;
        cores: string;
        appId: string;
        workerUrl?: string;
        memory?: string;
      }) => {
        const cores = Number(o.cores);
        if (!Number.isInteger(cores) || cores < 1)
          throw new Error(`--cores must be a whole number ≥ 1, got "${o.cores}"`);
        const memoryMB = memoryOption(o.memory);
        // The key its worker handed it (WICK_APP_CREDENTIAL), which opens its own application
        // alone; never the cluster secret.
        const env = await RpcEnv.create({
          protocol: wickProtocol,
          name: 'wickExecutor',
          clientMode: true,
          auth: executorAuth(),
        });
        let exiting = false;
        let backend: CoarseGrainedExecutorBackend | undefined;
        const exit = (code: number, reason: string) => {
          if (exiting) return;
          exiting = true;
          (code === 0 ? log.info.bind(log) : log.error.bind(log))(reason);
          // The connections close first; the task threads end meanwhile (see the backend's onStop).
          void env
            .stop()
            .then(() => backend?.threadsStopped())
            .finally(() => process.exit(code));
        };
        process.once('SIGTERM', () => exit(143, 'Received SIGTERM'));
        process.once('SIGINT', () => exit(130, 'Received SIGINT'));
        if (o.workerUrl)
          env.setupEndpoint(WorkerWatcher.ENDPOINT_NAME, new WorkerWatcher(o.workerUrl, exit));
        backend = new CoarseGrainedExecutorBackend({ ...o, cores, memoryMB, exit });
        env.setupEndpoint(CoarseGrainedExecutorBackend.ENDPOINT_NAME, backend);
        await env.awaitTermination();
      },
    );
}

/** --memory, in MiB (as {{MEMORY}} gives it); undefined when absent. */
function memoryOption(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const mb = Number(raw);
  if (!Number.isInteger(mb) || mb < 1)
    throw new Error(`--memory must be a whole number of MiB ≥ 1, got "${raw}"`);
  return mb;
}

function parseLaunch(line: string): StandbyLaunch {
  const v = JSON.parse(line) as Partial<StandbyLaunch>;
  const strings = (a: unknown): a is string[] =>
    Array.isArray(a) && a.every((x) => typeof x === 'string');
  if (
    !strings(v.argv) ||
    v.argv[2] !== 'executor' ||
    typeof v.cwd !== 'string' ||
    typeof v.env !== 'object' ||
    v.env === null ||
    !Object.values(v.env).every((x) => typeof x === 'string')
  ) {
    throw new Error(
      `executor-standby expects {"argv": [node, wick, "executor", …], "cwd": "…", "env": {…}} on stdin, got ${line.slice(0, 200)}`,
    );
  }
  return v as StandbyLaunch;
}
