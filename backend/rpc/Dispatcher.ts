import { RpcError, RpcErrorCode } from '../protocol/errors.js';
import type { WireMessage } from '../protocol/registry.js';
import { getLogger } from '../util/log.js';
import { Inbox, type InboxMessage } from './Inbox.js';
import { endpointURI } from './RpcAddress.js';
import type { RpcCallContext, RpcEndpoint, RpcSenderContext } from './RpcEndpoint.js';

/**
 * Pushes a master may have sent before it read a subscriber's (one-way) unsubscribe: one that
 * arrives after the subscriber's endpoint stopped is expected, not a fault worth a warning.
 */
const TRAILING_PUSHES: ReadonlySet<string> = new Set(['MasterStateEvent']);

const log = getLogger('Dispatcher');

/** Routes messages to endpoints' inboxes by name (Spark's Dispatcher). */
export class Dispatcher {
  private readonly inboxes = new Map<string, Inbox>();
  private stopped = false;

  constructor(private readonly envAddress: () => string) {}

  register(name: string, endpoint: RpcEndpoint): void {
    if (this.stopped) throw new RpcError(RpcErrorCode.RpcEnvStopped, 'RpcEnv stopped');
    if (this.inboxes.has(name)) {
      throw new Error(`There is already an RpcEndpoint called ${name}`);
    }
    this.inboxes.set(name, new Inbox(name, endpoint));
  }

  has(name: string): boolean {
    const inbox = this.inboxes.get(name);
    return inbox !== undefined && !inbox.isStopped;
  }

  /** Stops one endpoint: onStop runs after the messages already queued for it. */
  async unregister(name: string): Promise<void> {
    const inbox = this.inboxes.get(name);
    if (!inbox) return;
    this.inboxes.delete(name);
    await inbox.stop();
  }

  postOneWay(to: string, message: WireMessage, sender: RpcSenderContext): void {
    const inbox = this.inboxes.get(to);
    if (!inbox) {
      const text = `Dropped ${message.type} from ${sender.senderAddress}: no endpoint ${endpointURI(this.envAddress(), to)}`;
      if (TRAILING_PUSHES.has(message.type)) log.debug(text);
      else log.warn(text);
      return;
    }
    inbox.post({ kind: 'OneWay', message, sender });
  }

  postRpc(to: string, message: WireMessage, ctx: RpcCallContext): void {
    const inbox = this.inboxes.get(to);
    if (!inbox) {
      ctx.sendFailure(
        new RpcError(
          this.stopped ? RpcErrorCode.RpcEnvStopped : RpcErrorCode.EndpointNotFound,
          this.stopped
            ? 'RpcEnv stopped'
            : `Cannot find endpoint: ${endpointURI(this.envAddress(), to)}`,
        ),
      );
      return;
    }
    inbox.post({ kind: 'Rpc', message, ctx });
  }

  postToAll(msg: InboxMessage): void {
    for (const inbox of this.inboxes.values()) inbox.post(msg);
  }

  /** Stops every endpoint; resolves once all their onStop handlers have run. */
  async stop(): Promise<void> {
    this.stopped = true;
    const names = [...this.inboxes.keys()];
    await Promise.all(names.map((n) => this.unregister(n)));
  }
}
