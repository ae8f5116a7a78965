import { CheckExistence, CheckExistenceResponse } from '../protocol/rpc.js';
import { RpcEndpoint } from './RpcEndpoint.js';

/** Answers whether an endpoint exists, so that a ref is only handed out for a real one. */
export class RpcEndpointVerifier extends RpcEndpoint {
  static readonly NAME = 'endpoint-verifier';

  constructor() {
    super();
    this.on(CheckExistence, (msg) =>
      CheckExistenceResponse({ exists: this.rpcEnv.hasEndpoint(msg.name) }),
    );
  }
}
