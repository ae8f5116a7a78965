import { mkdir } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { EXECUTOR_STDERR_TAIL, readMadeLogTail } from '../logs/logTail.js';
import { madeLogs } from '../logs/madeLogs.js';
import {
  EXECUTOR_DIRS_ENV,
  EXECUTOR_RESOURCES_ENV,
  LOG_URL_STDERR_ENV,
  LOG_URL_STDOUT_ENV,
  SHUFFLE_SERVICE_ADDRESS_ENV,
} from '../protocol/childEnv.js';
import {
  type ApplicationDescription,
  type ExecutorState,
  isExecutorFinished,
} from '../protocol/common.js';
import type { ResourceAddresses } from '../protocol/resources.js';
import { isOutOfMemoryExit } from '../shared/outOfMemory.js';
import { getLogger } from '../util/log.js';
import { describeExit, exitStatusOf } from './exitStatus.js';
import type { MasterFetch } from './fetchDriverApp.js';
import type { RollingConf } from './logs/RollingFileAppender.js';
import { type Launched, type LaunchSpec, launch } from './process/launch.js';
import { formatCommand, substituteVariables } from './process/substitute.js';
import { Termination } from './process/termination.js';

const log = getLogger('ExecutorRunner');

/** What a runner needs from its worker. */
export interface RunnerHost {
  readonly host: string;
  readonly workerUrl: string;
  readonly webUiUrl: string;
  readonly killTimeoutMs: number;
  /** wick.executor.logs.rolling.*, when on: children's output through the worker, rolled. */
  readonly logRolling?: RollingConf;
  /** host:port of this worker's external shuffle service, if it runs one. */
  readonly shuffleServiceAddress?: string;
  /** A process already started that becomes this launch, if the host has one that fits. */
  takeStandby?(spec: LaunchSpec): Launched | undefined;
  /**
   * WICK_APP_CREDENTIAL for a process of application `id` (or of the submission `id`, a driver
   * before it registers): its key, derived from the cluster secret; nothing when running open.
   */
  credentialEnv?(kind: 'app' | 'submission', id: string): Record<string, string>;
  /** Fetches files from the master this worker follows (a cluster-mode driver's application). */
  fetchFromMaster?: MasterFetch;
  /**
   * `argv` wrapped to run confined to `own` (its directory, its application's local dirs), when
   * this worker confines applications (wick.executor.sandbox); undefined when it runs them open.
   */
  confine?(
    argv: readonly string[],
    own: { cwd: string; readWrite: readonly string[] },
  ): string[] | undefined;
}

/**
 * Runs one executor process (Spark's ExecutorRunner): `work/<appId>/<execId>/` as its directory,
 * the application's command with its {{VARIABLES}} filled in, stdout and stderr to files there.
 * Reports RUNNING once the process started, then how it ended.
 */
export class ExecutorRunner {
  state: ExecutorState = 'LAUNCHING';
  exitCode: number | undefined;
  message: string | undefined;
  readonly dir: string;
  /** The custom resources' addresses the master gave it (LaunchExecutor), handed to its process. */
  resources: ResourceAddresses = {};
  private process: Launched | undefined;
  private readonly termination: Termination;

  constructor(
    readonly appId: string,
    readonly execId: number,
    readonly appDesc: ApplicationDescription,
    readonly cores: number,
    readonly memory: number,
    private readonly host: RunnerHost,
    private readonly workDir: string,
    readonly appLocalDirs: readonly string[],
    private readonly onStateChanged: (runner: ExecutorRunner) => void,
  ) {
    this.dir = join(workDir, appId, String(execId));
    this.termination = new Termination(`executor ${this.fullId}`, host.killTimeoutMs);
  }

  /** Resolves once the process has exited (or failed to start) and the final state is set. */
  get finished(): Promise<void> {
    return this.termination.finished;
  }

  get fullId(): string {
    return `${this.appId}/${this.execId}`;
  }

  get pid(): number | undefined {
    return this.process?.pid;
  }

  async start(): Promise<void> {
    try {
      await mkdir(this.dir, { recursive: true });
      if (this.termination.killRequested) {
        this.finish('KILLED', 'Killed before it started', undefined);
        return;
      }
      const argv = substituteVariables(this.appDesc.command.argv, {
        EXECUTOR_ID: String(this.execId),
        HOSTNAME: this.host.host,
        CORES: String(this.cores),
        MEMORY: String(this.memory),
        APP_ID: this.appId,
        WORKER_URL: this.host.workerUrl,
        DRIVER_URL: this.appDesc.driverUrl ?? '',
      });
      const logUrl = (stream: string) =>
        `${this.host.webUiUrl}/logPage/?appId=${this.appId}&executorId=${this.execId}&logType=${stream}`;
      const spec: LaunchSpec = {
        argv,
        cwd: this.dir,
        env: {
          ...this.appDesc.command.env,
          ...this.host.credentialEnv?.('app', this.appId),
          [EXECUTOR_DIRS_ENV]: this.appLocalDirs.join(delimiter),
          ...(this.host.shuffleServiceAddress
            ? { [SHUFFLE_SERVICE_ADDRESS_ENV]: this.host.shuffleServiceAddress }
            : {}),
          [LOG_URL_STDOUT_ENV]: logUrl('stdout'),
          [LOG_URL_STDERR_ENV]: logUrl('stderr'),
          ...(Object.keys(this.resources).length > 0
            ? { [EXECUTOR_RESOURCES_ENV]: JSON.stringify(this.resources) }
            : {}),
        },
        header: `Wick Executor Command: ${formatCommand(argv)}`,
        ...(this.host.logRolling ? { rolling: this.host.logRolling } : {}),
      };
      // A standby writes its output straight to files: with rolling on, each executor is fresh.
      // In a confining worker the standby is confined already (prestart.ts).
      const standby = !spec.rolling ? this.host.takeStandby?.(spec) : undefined;
      const confined = standby
        ? undefined
        : this.host.confine?.(argv, { cwd: this.dir, readWrite: this.appLocalDirs });
      this.process =
        standby ?? (confined ? launch({ ...spec, argv: confined, sandboxed: true }) : launch(spec));
    } catch (err) {
      this.finish(
        'FAILED',
        `Failed to launch executor ${this.fullId}: ${(err as Error).message}`,
        undefined,
      );
      return;
    }
    const launched = this.process;
    launched.exited.then(
      async (exit) => {
        const killed = await this.termination.exited(launched);
        // Asked to kill, but it exited 0 on its own (an executor that got StopExecutor as its
        // application unregistered, which is when the master kills what it still lists): it
        // ended as it meant to. Wick's executor exits 143 on the SIGTERM of a kill.
        const byItself = exit.exitCode === 0;
        const state = killed && !byItself ? 'KILLED' : 'EXITED';
        let message = describeExit(exit);
        // An executor that failed by itself (one that cannot reach its driver, say) has said why
        // in its stderr: quote its end, so that the driver and the UIs can tell the user.
        if (state === 'EXITED' && !byItself) {
          const tail = await readMadeLogTail(
            this.workDir,
            { appId: this.appId, execId: this.execId, stream: 'stderr' },
            EXECUTOR_STDERR_TAIL,
            madeLogs,
          );
          // The first line is what an executor's state keeps (and the UIs show): say it there.
          if (isOutOfMemoryExit(tail)) message += ': JavaScript heap out of memory';
          if (tail) message += `\nThe end of its stderr:\n${tail}`;
        }
        this.finish(state, message, exitStatusOf(exit));
      },
      (err: Error) => this.finish('FAILED', err.message, undefined),
    );
    if (this.process.pid > 0) {
      this.state = 'RUNNING';
      log.info(`Launched executor ${this.fullId} as process ${this.process.pid}`);
      this.onStateChanged(this);
    }
  }

  /** Kills the whole process tree; resolves once the final state is reported. */
  async kill(): Promise<void> {
    if (this.isFinished) return;
    // Before it started, start() sees the request and reports KILLED without launching.
    await this.termination.kill(this.process);
    await this.finished;
  }

  get isFinished(): boolean {
    return isExecutorFinished(this.state);
  }

  private finish(state: ExecutorState, message: string, exitCode: number | undefined): void {
    this.termination.finish(() => {
      this.state = state;
      this.message = message;
      this.exitCode = exitCode;
      log.info(`Executor ${this.fullId} finished with state ${state}: ${message}`);
      this.onStateChanged(this);
    });
  }
}
