import { mkdir } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import type { ApplicationDescription, ExecutorState } from '../protocol/common.js';
import { getLogger } from '../util/log.js';
import { describeExit, exitStatusOf } from './exitStatus.js';
import { killProcessTree, sweep } from './process/kill.js';
import { type Launched, type LaunchSpec, launch } from './process/launch.js';
import { formatCommand, substituteVariables } from './process/substitute.js';

const log = getLogger('ExecutorRunner');

/** What a runner needs from its worker. */
export interface RunnerHost {
  readonly host: string;
  readonly workerUrl: string;
  readonly webUiUrl: string;
  readonly killTimeoutMs: number;
  /** A process already started that becomes this launch, if the host has one that fits. */
  takeStandby?(spec: LaunchSpec): Launched | undefined;
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
  private process: Launched | undefined;
  private killed = false;
  /** kill()'s sweep of the whole tree: KILLED is reported once it is done, not at the root's exit. */
  private killing: Promise<void> | undefined;
  /** Resolves once the process has exited (or failed to start) and the final state is set. */
  readonly finished: Promise<void>;
  private resolveFinished!: () => void;

  constructor(
    readonly appId: string,
    readonly execId: number,
    readonly appDesc: ApplicationDescription,
    readonly cores: number,
    readonly memory: number,
    private readonly host: RunnerHost,
    workDir: string,
    readonly appLocalDirs: readonly string[],
    private readonly onStateChanged: (runner: ExecutorRunner) => void,
  ) {
    this.dir = join(workDir, appId, String(execId));
    this.finished = new Promise((r) => {
      this.resolveFinished = r;
    });
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
      if (this.killed) {
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
          WICK_EXECUTOR_DIRS: this.appLocalDirs.join(delimiter),
          WICK_LOG_URL_STDOUT: logUrl('stdout'),
          WICK_LOG_URL_STDERR: logUrl('stderr'),
        },
        header: `Wick Executor Command: ${formatCommand(argv)}`,
      };
      this.process = this.host.takeStandby?.(spec) ?? launch(spec);
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
        const killed = this.killed;
        // What the executor started and left running (a daemon, an orphan) ends with it, before
        // the exit is reported: the worker leaves no process behind.
        if (!killed) await sweep(launched, this.host.killTimeoutMs);
        // Killed: the root may end before the rest of its tree; the state waits for all of it.
        else await this.killing?.catch(() => undefined);
        if (killed) this.finish('KILLED', describeExit(exit), exitStatusOf(exit));
        else this.finish('EXITED', describeExit(exit), exitStatusOf(exit));
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
    this.killed = true;
    if (!this.process) return this.finished;
    if (this.process.pid > 0) {
      log.info(`Killing process tree of executor ${this.fullId} (pid ${this.process.pid})`);
      this.killing = killProcessTree(
        this.process.pid,
        this.process.marker,
        this.host.killTimeoutMs,
      );
      await this.killing;
    }
    await this.finished;
  }

  get isFinished(): boolean {
    return (
      this.state === 'EXITED' ||
      this.state === 'KILLED' ||
      this.state === 'FAILED' ||
      this.state === 'LOST'
    );
  }

  private finish(state: ExecutorState, message: string, exitCode: number | undefined): void {
    if (this.isFinished) return;
    this.state = state;
    this.message = message;
    this.exitCode = exitCode;
    log.info(`Executor ${this.fullId} finished with state ${state}: ${message}`);
    this.onStateChanged(this);
    this.resolveFinished();
  }
}
