import { WORKER_WATCHER_ENDPOINT } from '../protocol/endpoints.js';
import { RpcEndpoint } from '../rpc/index.js';
import { parseEndpointURI } from '../rpc/RpcAddress.js';

/**
 * Ends a process when its worker goes away (Spark's WorkerWatcher), so that an executor or a
 * cluster-mode driver never outlives the worker that started it.
 */
export class WorkerWatcher extends RpcEndpoint {
  static readonly ENDPOINT_NAME = WORKER_WATCHER_ENDPOINT;
  private readonly workerAddress: string;

  constructor(
    private readonly workerUrl: string,
    private readonly exit: (code: number, reason: string) => void,
  ) {
    super();
    this.workerAddress = parseEndpointURI(workerUrl).address.hostPort;
  }

  override async onStart(): Promise<void> {
    try {
      await this.rpcEnv.setupEndpointRefByURI(this.workerUrl);
      this.log.info(`Connected to worker ${this.workerUrl}`);
    } catch (err) {
      this.exit(1, `Cannot reach worker ${this.workerUrl}: ${(err as Error).message}`);
    }
  }

  override onDisconnected(address: string): void {
    if (address === this.workerAddress)
      this.exit(1, `Lost connection to worker ${this.workerUrl}. Exiting.`);
  }

  override onNetworkError(err: Error, address: string): void {
    if (address === this.workerAddress)
      this.exit(1, `Lost connection to worker ${this.workerUrl}: ${err.message}`);
  }
}
