import type { WireMessage } from '../protocol/registry.js';
import { CheckExistenceResponse } from '../protocol/rpc.js';
import { type RpcCallContext, RpcEndpoint, unsupported } from './RpcEndpoint.js';

/** Answers whether an endpoint exists, so that a ref is only handed out for a real one. */
export class RpcEndpointVerifier extends RpcEndpoint {
  static readonly NAME = 'endpoint-verifier';

  override receiveAndReply(message: WireMessage, ctx: RpcCallContext): unknown {
    if (message.type === 'CheckExistence') {
      const name = message.name as string;
      return CheckExistenceResponse({ exists: this.rpcEnv.hasEndpoint(name) });
    }
    throw unsupported(message, ctx);
  }
}
