import { closeSync, mkdirSync, openSync } from 'node:fs';
import { copyFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { madeLogs } from '../logs/madeLogs.js';
import { type DriverDescription, type DriverState, isDriverFinished } from '../protocol/common.js';
import type { Clock } from '../util/clock.js';
import { getLogger } from '../util/log.js';
import type { RunnerHost } from './ExecutorRunner.js';
import { describeExit, exitStatusOf } from './exitStatus.js';
import { fetchDriverApp } from './fetchDriverApp.js';
import { type Launched, launch } from './process/launch.js';
import { formatCommand, substituteVariables } from './process/substitute.js';
import { Termination } from './process/termination.js';

const log = getLogger('DriverRunner');

/** A run this long resets the supervisor's back-off (Spark's successfulRunDuration). */
const SUCCESSFUL_RUN_MS = 5000;

/**
 * Runs one driver in cluster deploy mode (Spark's DriverRunner): `work/<driverId>/` with the
 * application copied in, the command with {{WORKER_URL}} and {{USER_APP}} filled in, stdout and
 * stderr appended to files there (so a supervised driver's runs follow each other in one log).
 * Supervised, it is relaunched after a non-zero exit: 1 s, then doubling, reset after a run of
 * more than 5 s. The final state is FINISHED, KILLED, FAILED or ERROR.
 */
export class DriverRunner {
  state: DriverState = 'SUBMITTED';
  exitCode: number | undefined;
  exception: string | undefined;
  readonly dir: string;
  /** How many times the process was started. */
  runs = 0;
  private process: Launched | undefined;
  private readonly termination: Termination;
  private env: Record<string, string>;
  private wakeUp: (() => void) | undefined;

  constructor(
    readonly driverId: string,
    readonly desc: DriverDescription,
    private readonly host: RunnerHost,
    workDir: string,
    private readonly clock: Clock,
    private readonly onFinished: (runner: DriverRunner) => void,
  ) {
    this.dir = join(workDir, driverId);
    this.termination = new Termination(`driver ${driverId}`, host.killTimeoutMs);
    this.env = desc.command.env;
  }

  /** Resolves once the final state is reported. */
  get finished(): Promise<void> {
    return this.termination.finished;
  }

  get pid(): number | undefined {
    return this.process?.pid;
  }

  get isFinished(): boolean {
    return isDriverFinished(this.state);
  }

  /** Runs the driver, supervised if asked, until its final state; never throws. */
  async run(): Promise<void> {
    this.state = 'RUNNING';
    try {
      // Synchronously, before any other message is handled: the master reports the driver
      // RUNNING when it places it, so a client may ask this worker for its log at once (empty
      // logs rather than "No such log").
      mkdirSync(this.dir, { recursive: true });
      for (const stream of ['stdout', 'stderr']) {
        const fd = openSync(join(this.dir, stream), 'a');
        madeLogs.record(join(this.dir, stream), fd);
        closeSync(fd);
      }
      let localApp: string;
      const shipped = this.desc.shipped;
      if (shipped) {
        if (!this.host.fetchFromMaster) throw new Error('This worker cannot fetch from a master');
        const fetched = await fetchDriverApp(this.host.fetchFromMaster, shipped, this.dir);
        localApp = fetched.entry;
        this.env = { ...this.desc.command.env, ...fetched.env };
      } else {
        // A driver of another language, on a disk the worker shares (Spark's local jar URL).
        localApp = join(this.dir, basename(this.desc.appPath));
        await copyFile(resolve(this.desc.appPath), localApp);
      }
      const argv = substituteVariables(this.desc.command.argv, {
        WORKER_URL: this.host.workerUrl,
        USER_APP: localApp,
      });
      const exitCode = await this.runWithRetry(argv);
      this.exitCode = exitCode;
      const killed = this.termination.killRequested;
      // Killed: the root may end before the rest of its tree; the state waits for all of it.
      if (killed) await this.termination.treeGone();
      this.finish(killed ? 'KILLED' : exitCode === 0 ? 'FINISHED' : 'FAILED');
    } catch (err) {
      this.exception = (err as Error).message;
      log.warn(`Driver ${this.driverId} failed with an error`, err);
      await this.kill();
      this.finish('ERROR');
    }
  }

  async kill(): Promise<void> {
    if (this.termination.killRequested) return;
    const killing = this.termination.kill(this.process);
    // A relaunch back-off ends now; the supervisor sees the kill and launches nothing more.
    this.wakeUp?.();
    await killing;
  }

  private async runWithRetry(argv: string[]): Promise<number> {
    let exitCode = -1;
    let waitSeconds = 1;
    for (;;) {
      if (this.termination.killRequested) return exitCode;
      log.info(`Launch Command: ${formatCommand(argv)}`);
      this.runs++;
      const confined = this.host.confine?.(argv, { cwd: this.dir, readWrite: [] });
      this.process = launch({
        argv: confined ?? argv,
        sandboxed: confined !== undefined,
        cwd: this.dir,
        env: { ...this.env, ...this.host.credentialEnv?.('submission', this.driverId) },
        header: `Launch Command: ${formatCommand(argv)}`,
        append: true,
        ...(this.host.logRolling ? { rolling: this.host.logRolling } : {}),
      });
      const started = this.clock.now();
      const exit = await this.process.exited;
      // What this run left running (a daemon, an orphan) ends with it.
      await this.termination.exited(this.process);
      exitCode = exitStatusOf(exit);
      if (!this.desc.supervise || exitCode === 0 || this.termination.killRequested) return exitCode;
      if (this.clock.now() - started > SUCCESSFUL_RUN_MS) waitSeconds = 1;
      log.info(`${describeExit(exit)}, re-launching after ${waitSeconds} s.`);
      this.state = 'RELAUNCHING';
      await this.sleep(waitSeconds * 1000);
      this.state = 'RUNNING';
      waitSeconds *= 2;
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((r) => {
      const timer = this.clock.setTimeout(() => r(), ms);
      this.wakeUp = () => {
        timer.cancel();
        r();
      };
    });
  }

  private finish(state: DriverState): void {
    this.termination.finish(() => {
      this.state = state;
      log.info(`Driver ${this.driverId} finished with state ${state}`);
      this.onFinished(this);
    });
  }
}
