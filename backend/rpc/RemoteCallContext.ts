import type { JSONRPCID, JSONRPCResponse } from 'json-rpc-2.0';
import { RpcError } from '../protocol/errors.js';
import type { WireMessage } from '../protocol/registry.js';
import type { PeerConnection, RpcCallContext } from './RpcEndpoint.js';
import { errorResponse } from './responses.js';

/** How an endpoint answers an ask that came over a connection: once, under the ask's id. */
export class RemoteCallContext implements RpcCallContext {
  private replied = false;

  readonly senderAddress: string;

  constructor(
    readonly connection: PeerConnection,
    private readonly id: JSONRPCID,
    private readonly done: (response: JSONRPCResponse) => void,
  ) {
    this.senderAddress = connection.peer;
  }

  reply(response: WireMessage): void {
    if (this.replied) return;
    this.replied = true;
    this.done({ jsonrpc: '2.0', id: this.id, result: response });
  }

  sendFailure(err: unknown): void {
    if (this.replied) return;
    this.replied = true;
    const e = RpcError.from(err);
    this.done(errorResponse(this.id, e.code, e.message, e.data));
  }
}
