import type { DriverRunner } from './DriverRunner.js';
import type { ExecutorRunner } from './ExecutorRunner.js';

/**
 * The worker's executor and driver runners: those running (by `appId/execId` and by driver id)
 * and the last finished ones, kept for the worker's page up to wick.worker.ui.retainedExecutors /
 * retainedDrivers, the oldest dropped first (Spark's finishedExecutors / finishedDrivers).
 */
export class Runners {
  private readonly executors = new Map<string, ExecutorRunner>();
  private readonly finishedExecutors = new Map<string, ExecutorRunner>();
  private readonly drivers = new Map<string, DriverRunner>();
  private readonly finishedDrivers = new Map<string, DriverRunner>();

  constructor(
    private readonly retained: { readonly executors: number; readonly drivers: number },
    /** Told after each change of the runners or of a runner's state (the worker's page). */
    private readonly changed: () => void = () => {},
  ) {}

  /** A runner's own state changed (its process started, or ended): the page shows it. */
  runnerChanged(): void {
    this.changed();
  }

  /** A running executor, by `appId/execId`. */
  executor(fullId: string): ExecutorRunner | undefined {
    return this.executors.get(fullId);
  }

  /** A running driver. */
  driver(driverId: string): DriverRunner | undefined {
    return this.drivers.get(driverId);
  }

  /** A retained finished driver. */
  finishedDriver(driverId: string): DriverRunner | undefined {
    return this.finishedDrivers.get(driverId);
  }

  runningExecutors(): ExecutorRunner[] {
    return [...this.executors.values()];
  }

  retainedExecutors(): ExecutorRunner[] {
    return [...this.finishedExecutors.values()];
  }

  runningDrivers(): DriverRunner[] {
    return [...this.drivers.values()];
  }

  retainedDrivers(): DriverRunner[] {
    return [...this.finishedDrivers.values()];
  }

  runningDriverIds(): string[] {
    return [...this.drivers.keys()];
  }

  /** Whether an executor of `appId` still runs here. */
  hasExecutorsOf(appId: string): boolean {
    for (const r of this.executors.values()) if (r.appId === appId) return true;
    return false;
  }

  /** Adds a starting executor; refuses one whose `appId/execId` already runs. */
  addExecutor(runner: ExecutorRunner): void {
    if (this.executors.has(runner.fullId)) {
      throw new Error(`Executor ${runner.fullId} is already running here`);
    }
    this.executors.set(runner.fullId, runner);
    this.changed();
  }

  /** Adds a starting driver; refuses one whose id already runs. */
  addDriver(runner: DriverRunner): void {
    if (this.drivers.has(runner.driverId)) {
      throw new Error(`Driver ${runner.driverId} is already running here`);
    }
    this.drivers.set(runner.driverId, runner);
    this.changed();
  }

  /**
   * Moves a finished executor to the retained ones; returns false if it was not running here
   * (already moved), so that its resources are released once.
   */
  executorFinished(runner: ExecutorRunner): boolean {
    if (!this.executors.delete(runner.fullId)) return false;
    retain(this.finishedExecutors, runner.fullId, runner, this.retained.executors);
    this.changed();
    return true;
  }

  /** As executorFinished, for a driver. */
  driverFinished(runner: DriverRunner): boolean {
    if (!this.drivers.delete(runner.driverId)) return false;
    retain(this.finishedDrivers, runner.driverId, runner, this.retained.drivers);
    this.changed();
    return true;
  }

  /** Kills every running executor and driver tree (worker shutdown). */
  async killAll(): Promise<void> {
    await Promise.all([
      ...[...this.executors.values()].map((r) => r.kill()),
      ...[...this.drivers.values()].map((r) => r.kill()),
    ]);
  }
}

function retain<T>(map: Map<string, T>, key: string, value: T, max: number): void {
  map.set(key, value);
  while (map.size > max) {
    const first = map.keys().next().value as string;
    map.delete(first);
  }
}
