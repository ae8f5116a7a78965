import type { ExecutorDescription, WorkerState } from '../protocol/common.js';
import type { ResourceAddresses } from '../protocol/resources.js';
import type { WorkerSummary } from '../protocol/state.js';
import type { PeerConnection, RpcEndpointRef } from '../rpc/index.js';
import type { DriverInfo } from './DriverInfo.js';
import type { ExecutorDesc } from './ExecutorDesc.js';
import { WorkerResourcePool } from './resources/WorkerResourcePool.js';

/** What the Master knows of one worker (Spark's WorkerInfo). */
export class WorkerInfo {
  state: WorkerState = 'ALIVE';
  lastHeartbeat: number;
  readonly executors = new Map<string, ExecutorDesc>();
  readonly drivers = new Map<string, DriverInfo>();
  coresUsed = 0;
  memoryUsed = 0;
  /** Its custom resources (RegisterWorker's, or the persisted record's), and who holds them. */
  resources = new WorkerResourcePool();

  constructor(
    readonly id: string,
    readonly host: string,
    readonly port: number,
    readonly cores: number,
    readonly memory: number,
    public endpoint: RpcEndpointRef,
    readonly webUiAddress: string,
    now: number,
    /**
     * The connection it registered on (or answered a master change on): the only one its
     * messages count over, and the one the master's go out on. Undefined for a worker recovered
     * from the persisted state that has not answered yet.
     */
    public connection?: PeerConnection,
  ) {
    this.lastHeartbeat = now;
  }

  get hostPort(): string {
    return `${this.host}:${this.port}`;
  }

  get coresFree(): number {
    return this.cores - this.coresUsed;
  }

  get memoryFree(): number {
    return this.memory - this.memoryUsed;
  }

  get isAlive(): boolean {
    return this.state === 'ALIVE';
  }

  /** Adds it with the addresses it holds; returns those of them another holds or it lacks. */
  addExecutor(exec: ExecutorDesc): ResourceAddresses {
    this.executors.set(exec.fullId, exec);
    this.coresUsed += exec.cores;
    this.memoryUsed += exec.memory;
    const refused = this.resources.acquire(exec.resources);
    // Not its own: freeing it must not free another executor's.
    exec.resourcesRefused(refused);
    return refused;
  }

  removeExecutor(exec: ExecutorDesc): void {
    if (this.executors.delete(exec.fullId)) {
      this.coresUsed -= exec.cores;
      this.memoryUsed -= exec.memory;
      this.resources.release(exec.resources);
    }
  }

  hasExecutor(appId: string): boolean {
    for (const e of this.executors.values()) if (e.appId === appId) return true;
    return false;
  }

  addDriver(driver: DriverInfo): void {
    this.drivers.set(driver.id, driver);
    this.coresUsed += driver.desc.cores;
    this.memoryUsed += driver.desc.mem;
  }

  removeDriver(driver: DriverInfo): void {
    if (this.drivers.delete(driver.id)) {
      this.coresUsed -= driver.desc.cores;
      this.memoryUsed -= driver.desc.mem;
    }
  }

  executorDescriptions(): ExecutorDescription[] {
    return [...this.executors.values()].map((e) => ({
      appId: e.appId,
      execId: e.id,
      cores: e.cores,
      state: e.state,
      ...(Object.keys(e.resources).length > 0 ? { resources: e.resources } : {}),
    }));
  }

  summary(): WorkerSummary {
    return {
      id: this.id,
      host: this.host,
      port: this.port,
      webUiAddress: this.webUiAddress,
      cores: this.cores,
      coresUsed: this.coresUsed,
      memory: this.memory,
      memoryUsed: this.memoryUsed,
      state: this.state,
      lastHeartbeat: this.lastHeartbeat,
      executors: [...this.executors.values()].map((e) => ({ appId: e.appId, execId: e.id })),
      driverIds: [...this.drivers.keys()],
      ...(this.resources.isEmpty
        ? {}
        : { resources: this.resources.addresses(), resourcesUsed: this.resources.used() }),
    };
  }
}
