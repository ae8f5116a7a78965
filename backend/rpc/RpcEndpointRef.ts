import { RpcError, RpcErrorCode } from '../protocol/errors.js';
import type { MessageCatalog, ReplyOf, WireMessage } from '../protocol/registry.js';
import { endpointURI } from './RpcAddress.js';
import type { PeerConnection } from './RpcEndpoint.js';

/** What a ref needs from the env it sends through. */
export interface RefTransport {
  send(ref: RpcEndpointRef, message: WireMessage): void;
  ask(ref: RpcEndpointRef, message: WireMessage, timeoutMs?: number): Promise<WireMessage>;
  flush(ref: RpcEndpointRef): void;
  /** The definitions of what may be asked, and so of the replies each ask expects. */
  readonly protocol: MessageCatalog;
}

export interface AskOptions {
  /** Milliseconds; defaults to wick.rpc.askTimeout. */
  timeout?: number;
}

/**
 * A handle on an endpoint, local or remote. Sending through it never blocks; a remote peer is
 * connected on first use — unless the ref is bound to one connection (`via`, from
 * RpcEnv.refOver): then it sends over that connection alone, and fails once it is closed rather
 * than dialling whoever listens at the address. That is how a master talks to the worker that
 * registered on a connection, and a driver to the executor that did.
 */
export class RpcEndpointRef {
  constructor(
    /** The endpoint's RpcEnv: `host:port` or `client-<id>`. */
    readonly address: string,
    readonly name: string,
    private readonly transport: RefTransport,
    readonly via?: PeerConnection,
  ) {}

  /** One-way: a JSON-RPC notification. Failures are logged and reported to onNetworkError. */
  send(message: WireMessage): void {
    this.transport.send(this, message);
  }

  /**
   * Writes what this turn has sent to the endpoint's peer now. Sends wait for the end of the turn
   * to go out in one write; a sender about to spend a while on more of them flushes the first, so
   * that the peer can start on them meanwhile.
   */
  flush(): void {
    this.transport.flush(this);
  }

  /**
   * Request and reply: resolves to the reply, typed by the request's definition, or rejects with
   * an RpcError. A reply of a type the definition does not declare is refused here.
   */
  async ask<M extends WireMessage>(message: M, options?: AskOptions): Promise<ReplyOf<M>> {
    const reply = await this.transport.ask(this, message, options?.timeout);
    const expected = this.transport.protocol.get(message.type)?.replies;
    if (expected && !expected.some((d) => d.type === reply.type)) {
      throw new RpcError(
        RpcErrorCode.InvalidReply,
        `Expected ${expected.map((d) => d.type).join(' or ')} in reply to ${message.type} from ${this}, got ${reply.type}`,
      );
    }
    return reply as ReplyOf<M>;
  }

  /** The form a ref takes inside a message. */
  toData(): { address: string; name: string } {
    return { address: this.address, name: this.name };
  }

  toString(): string {
    return endpointURI(this.address, this.name);
  }
}
