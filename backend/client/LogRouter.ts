import { ReverseProxyConf } from '../conf/reverseProxy.js';
import type { WickConf } from '../conf/WickConf.js';
import { LOG_RELAY_ENDPOINT, WORKER_ENDPOINT } from '../protocol/endpoints.js';
import type { RpcEndpointRef, RpcEnv } from '../rpc/index.js';
import { findLogWorker, type LookupState } from '../shared/logLookup.js';
import { describeLogSource, type LogSource } from '../shared/logSource.js';
import { getLogger } from '../util/log.js';

const log = getLogger('LogRouter');

/** Where a client sends a log's messages (RequestLogRange, FollowLog, StopFollowLog). */
export interface LogRoute {
  /** The Worker endpoint that holds the log, or the master's LogRelay. */
  ref: RpcEndpointRef;
  via: 'worker' | 'master';
  /** Why through the master, for a user who wonders why a log is slow: undefined when direct. */
  reason?: string;
}

export interface LogRouterOptions {
  /** wick.ui.reverseProxy: always through the master. */
  reverseProxy: boolean;
  /** wick.ui.reverseProxy.workerConnectTimeout */
  workerConnectTimeoutMs: number;
}

export function logRouterOptions(conf: WickConf): LogRouterOptions {
  return {
    reverseProxy: conf.get(ReverseProxyConf.enabled),
    workerConnectTimeoutMs: conf.get(ReverseProxyConf.workerConnectTimeout),
  };
}

/**
 * Which way a client reads a log: straight from the worker that holds it when the client can
 * reach that worker, else through the master (which relays the same messages over its own
 * connection with the worker: a laptop with a tunnel to the master's port reads every log).
 * Whether a worker answers is tried once per worker address, within the short
 * workerConnectTimeout, and remembered for the life of the router: the agent then does not wait
 * again on each log of a worker it cannot reach.
 */
export class LogRouter {
  private readonly reachable = new Map<string, Promise<string | undefined>>();

  constructor(
    private readonly env: RpcEnv,
    private readonly options: LogRouterOptions,
  ) {}

  /** @param master the Master endpoint now in use (the relay is beside it, in its RpcEnv). */
  async route(state: LookupState, source: LogSource, master: RpcEndpointRef): Promise<LogRoute> {
    const worker = findLogWorker(state, source);
    const relay = () => this.env.endpointRef({ address: master.address, name: LOG_RELAY_ENDPOINT });
    const what = describeLogSource(source);
    if (this.options.reverseProxy) {
      log.debug(
        `The log of ${what} goes through the master at ${master.address} (wick.ui.reverseProxy)`,
      );
      return { ref: relay(), via: 'master', reason: 'wick.ui.reverseProxy is on' };
    }
    const address = `${worker.host}:${worker.port}`;
    let probe = this.reachable.get(address);
    if (!probe) {
      probe = this.probe(address);
      this.reachable.set(address, probe);
    }
    const unreachable = await probe;
    if (unreachable === undefined) {
      log.debug(`The log of ${what} is read from worker ${worker.id} at ${address}`);
      return { ref: this.env.endpointRef({ address, name: WORKER_ENDPOINT }), via: 'worker' };
    }
    const reason = `worker ${worker.id} at ${address} cannot be reached from here (${unreachable})`;
    log.debug(`The log of ${what} goes through the master at ${master.address}: ${reason}`);
    return { ref: relay(), via: 'master', reason };
  }

  /** Undefined when the worker's endpoint answers in time, else why not. */
  private async probe(address: string): Promise<string | undefined> {
    const ms = this.options.workerConnectTimeoutMs;
    try {
      await this.env.setupEndpointRef(address, WORKER_ENDPOINT, { timeout: ms });
      return undefined;
    } catch (err) {
      const message = (err as Error).message;
      return /timed? ?out|timeout/i.test(message) ? `no answer within ${ms} ms` : message;
    }
  }
}
