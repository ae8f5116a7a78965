import type { JSONRPCRequest, JSONRPCResponse } from 'json-rpc-2.0';
import { compiledCheck } from '../protocol/compiledCheck.js';
import { RpcErrorCode } from '../protocol/errors.js';
import {
  type AnyMessageDef,
  type MessageCatalog,
  validateMessage,
  type WireMessage,
} from '../protocol/registry.js';
import { Envelope } from '../protocol/rpc.js';
import { principalText } from './credentials.js';
import type { Dispatcher } from './Dispatcher.js';
import { AUTH_METHOD, HELLO_METHOD, handshakeAfterOpen } from './Handshake.js';
import { clip } from './peerText.js';
import { RemoteCallContext } from './RemoteCallContext.js';
import { logRefusal, mayPlay, refuse } from './refusals.js';
import { errorResponse } from './responses.js';
import type { Session } from './Session.js';

const checkEnvelope = compiledCheck('rpc.Envelope', Envelope);

/**
 * Where every message from a peer goes in: the one place that checks what may be delivered — a
 * type of the env's catalogue, a valid envelope from this connection's peer, a message valid by
 * its schema — before the dispatcher hands it to its endpoint's inbox.
 */
export class InboundRouter {
  constructor(
    private readonly protocol: MessageCatalog,
    private readonly dispatcher: Dispatcher,
  ) {}

  /**
   * Serves one request or notification from a peer (SessionHost). Routed by hand rather than
   * through json-rpc-2.0's JSONRPCServer: that server awaits a middleware chain and a generator per
   * message, and every heartbeat of every worker passes here. A notification is handled at once and
   * answers null; an ask answers a promise of its response.
   */
  handle(
    req: JSONRPCRequest,
    conn: Session,
  ): JSONRPCResponse | null | Promise<JSONRPCResponse | null> {
    const method = req.method;
    // The handshake phase served these before the session opened; now they are out of order.
    if (method === HELLO_METHOD || method === AUTH_METHOD) return handshakeAfterOpen(req);
    if (this.protocol.get(method) === undefined) {
      conn.warnAboutPeer(`unknown message type ${JSON.stringify(clip(method))}`);
      return req.id === undefined
        ? null
        : errorResponse(
            req.id,
            RpcErrorCode.MethodNotFound,
            `Method not found: ${clip(method)} is not a Wick message type`,
          );
    }
    return this.receive(req, conn);
  }

  /** An endpoint message from a peer: check the envelope and the message, then dispatch. */
  private receive(
    req: JSONRPCRequest,
    conn: Session,
  ): JSONRPCResponse | null | Promise<JSONRPCResponse> {
    const id = req.id;
    const problem = this.envelopeProblem(req, conn);
    if (problem) {
      // Logged either way (within the connection's limit): an ask's refusal also reaches its
      // sender, but the peer's author may be reading this side's log.
      conn.warnAboutPeer(
        `${id === undefined ? 'dropped' : 'refused'} ${clip(req.method)}: ${problem}`,
      );
      if (id === undefined) return null;
      return errorResponse(id, RpcErrorCode.InvalidParams, `Invalid params: ${problem}`);
    }
    const params = req.params as { to: string; message: WireMessage };
    const def = this.protocol.get(req.method) as AnyMessageDef;
    if (!mayPlay(conn.principal, def.from, def.to)) {
      const refusal = refuse(
        req.method,
        `it is sent by ${def.from.join(' or ')}, and this connection proved ${principalText(conn.principal)}`,
      );
      logRefusal(req.method, conn.sender, refusal);
      return id === undefined ? null : errorResponse(id, refusal.code, refusal.message);
    }
    if (id === undefined) {
      this.dispatcher.postOneWay(params.to, params.message, conn.sender);
      return null;
    }
    return new Promise((resolve) => {
      this.dispatcher.postRpc(params.to, params.message, new RemoteCallContext(conn, id, resolve));
    });
  }

  private envelopeProblem(req: JSONRPCRequest, conn: Session): string | undefined {
    const params = req.params;
    if (!checkEnvelope.Check(params)) {
      const first = checkEnvelope.Errors(params).First();
      return `expected an envelope {to, from, message}${first ? `; ${first.path || '/'} ${first.message}` : ''}`;
    }
    if (params.message.type !== req.method) {
      return `message.type ${JSON.stringify(params.message.type)} differs from method ${JSON.stringify(req.method)}`;
    }
    if (params.from !== conn.peer) {
      return `"from" is ${JSON.stringify(params.from)} but this connection belongs to ${conn.peer}`;
    }
    const def = this.protocol.get(req.method);
    return def ? validateMessage(def, params.message) : `unknown message type ${req.method}`;
  }
}
