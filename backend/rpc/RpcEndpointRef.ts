import type { AnyMessageDef, MessageOf, WireMessage } from '../protocol/registry.js';
import { endpointURI } from './RpcAddress.js';

/** What a ref needs from the env it sends through. */
export interface RefTransport {
  send(ref: RpcEndpointRef, message: WireMessage): void;
  ask(ref: RpcEndpointRef, message: WireMessage, timeoutMs?: number): Promise<WireMessage>;
  flush(ref: RpcEndpointRef): void;
}

export interface AskOptions {
  /** Milliseconds; defaults to wick.rpc.askTimeout. */
  timeout?: number;
}

/**
 * A handle on an endpoint, local or remote. Sending through it never blocks; a remote peer is
 * connected on first use.
 */
export class RpcEndpointRef {
  constructor(
    /** The endpoint's RpcEnv: `host:port` or `client-<id>`. */
    readonly address: string,
    readonly name: string,
    private readonly transport: RefTransport,
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

  /** Request and reply: resolves to the reply, or rejects with an RpcError. */
  ask(message: WireMessage, options?: AskOptions): Promise<WireMessage>;
  /** Request and reply, checking that the reply is of the expected type. */
  ask<R extends AnyMessageDef>(
    message: WireMessage,
    expect: R,
    options?: AskOptions,
  ): Promise<MessageOf<R>>;
  async ask(
    message: WireMessage,
    expectOrOptions?: AnyMessageDef | AskOptions,
    maybeOptions?: AskOptions,
  ): Promise<WireMessage> {
    const expect = typeof expectOrOptions === 'function' ? expectOrOptions : undefined;
    const options = expect ? maybeOptions : (expectOrOptions as AskOptions | undefined);
    const reply = await this.transport.ask(this, message, options?.timeout);
    if (expect && reply.type !== expect.type) {
      throw new Error(
        `Expected ${expect.type} in reply to ${message.type} from ${this}, got ${reply.type}`,
      );
    }
    return reply;
  }

  /** The form a ref takes inside a message. */
  toData(): { address: string; name: string } {
    return { address: this.address, name: this.name };
  }

  toString(): string {
    return endpointURI(this.address, this.name);
  }
}
