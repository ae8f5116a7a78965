import { RpcError, RpcErrorCode } from '../protocol/errors.js';
import type { AnyMessageDef, DefReply, MessageOf, WireMessage } from '../protocol/registry.js';
import { getLogger } from '../util/log.js';
import type { Principal } from './credentials.js';
import type { RpcEndpointRef } from './RpcEndpointRef.js';
import type { RpcEnv } from './RpcEnv.js';

/**
 * A connection to a peer, as a handler sees it: what the handshake proved, and the identity to
 * compare against. Two messages came from the same peer exactly when they came over the same
 * connection; an address (`senderAddress`, the envelope's `from`) is only what the peer claims.
 */
export interface PeerConnection {
  /** The address the peer announced in its wick.hello. */
  readonly peer: string;
  /** What it proved: the key it holds (or `open`, when this side authenticates nobody). */
  readonly principal: Principal;
  /** `outbound`: we dialled the peer's address, so it is whoever listens there. */
  readonly direction: 'inbound' | 'outbound';
  readonly isOpen: boolean;
}

/** Where a one-way message came from. */
export interface RpcSenderContext {
  /** The sender's RpcEnv: `host:port`, or `client-<id>` for a client-mode env. */
  readonly senderAddress: string;
  /** The connection it came over; undefined when it came from this env itself. */
  readonly connection?: PeerConnection;
}

/** Where an ask came from, and how to answer it (Spark's RpcCallContext). */
export interface RpcCallContext<R = WireMessage> extends RpcSenderContext {
  reply(response: R): void;
  sendFailure(err: unknown): void;
}

/** A one-way message's handler. */
export type OneWayHandler<M> = (message: M, sender: RpcSenderContext) => void | Promise<void>;

/**
 * A request's handler: it answers by returning the reply, or later through ctx.reply /
 * ctx.sendFailure (then it returns undefined).
 */
export type RequestHandler<M, R> = (
  message: M,
  ctx: RpcCallContext<R>,
) => R | undefined | Promise<R | undefined>;

/** The handler a definition takes: a request's answers with one of its declared replies. */
export type HandlerOf<D> = [DefReply<D>] extends [never]
  ? OneWayHandler<MessageOf<D>>
  : RequestHandler<MessageOf<D>, DefReply<D>>;

/** A registered handler, as the inbox calls it. */
export interface BoundHandler {
  readonly def: AnyMessageDef;
  readonly fn: (message: WireMessage, ctx: RpcCallContext) => unknown;
  /** Worked out once, at registration: every message passes the check of them. */
  readonly isRequest: boolean;
  readonly selfOnly: boolean;
}

/**
 * An endpoint, with Spark's documented lifecycle:
 *
 *   constructor → onStart → (handlers of its messages)* → onStop
 *
 * onStart is always handled first. Messages arrive one at a time, in order: each handler is
 * awaited before the next message is handed over, so an endpoint's state needs no locks even when
 * its handlers await (JavaScript interleaves at every await; serialising handlers is what makes
 * Spark's ThreadSafeRpcEndpoint guarantee hold here). Set `concurrent` to opt out.
 *
 * Handlers are registered by message definition, usually in the constructor
 * (`this.on(LaunchExecutor, (msg) => …)`, as vscode-jsonrpc's `onRequest(type, handler)`): the
 * message's type comes from the definition, and a request's handler must answer with one of the
 * replies the definition declares. A message with no handler here is refused with
 * UnsupportedMessage; a one-way message sent as an ask, or an ask sent one-way, is refused saying
 * so. A handler that throws fails the caller's ask with its message and reaches onError; the
 * endpoint keeps serving.
 */
export abstract class RpcEndpoint {
  /** Set by RpcEnv.setupEndpoint before onStart. */
  rpcEnv!: RpcEnv;
  /** This endpoint's own ref, set by RpcEnv.setupEndpoint before onStart. */
  self!: RpcEndpointRef;
  /** When true, messages after onStart are handled without waiting for the previous handler. */
  readonly concurrent: boolean = false;

  protected readonly log = getLogger(this.constructor.name);
  private readonly handlers = new Map<string, BoundHandler>();

  /** Registers the handler of one message; a second handler for the same message is refused. */
  protected on<D extends AnyMessageDef>(def: D, handler: HandlerOf<D>): void {
    if (this.handlers.has(def.type)) {
      throw new Error(`${this.constructor.name} already has a handler for ${def.type}`);
    }
    this.handlers.set(def.type, {
      def,
      fn: handler as BoundHandler['fn'],
      isRequest: def.replies !== undefined,
      selfOnly: def.from.includes('self'),
    });
  }

  /** The handler of a message type, for the inbox. */
  handlerFor(type: string): BoundHandler | undefined {
    return this.handlers.get(type);
  }

  /** The definitions this endpoint handles (a test checks them against its boundaries). */
  handledMessages(): AnyMessageDef[] {
    return [...this.handlers.values()].map((h) => h.def);
  }

  /**
   * Why this endpoint does not take `message` from `sender`, or undefined when it does: the
   * endpoint's own rule of who may send what (a worker takes launches only from its master's
   * connection, say), checked before every handler. A refusal answers NotPermitted and is logged
   * once per connection (refusals.ts).
   */
  senderProblem(
    _def: AnyMessageDef,
    _message: WireMessage,
    _sender: RpcSenderContext,
  ): string | undefined {
    return undefined;
  }

  onStart(): void | Promise<void> {}

  onError(err: Error): void {
    this.log.warn('Error in a message handler', err);
  }

  onConnected(_remoteAddress: string): void | Promise<void> {}

  onDisconnected(_remoteAddress: string): void | Promise<void> {}

  onNetworkError(_err: Error, _remoteAddress: string): void | Promise<void> {}

  onStop(): void | Promise<void> {}
}

/** The error for a message an endpoint has no handler for. */
export function unsupported(message: WireMessage, sender: RpcSenderContext): RpcError {
  return new RpcError(
    RpcErrorCode.UnsupportedMessage,
    `Unsupported message ${message.type} from ${sender.senderAddress}`,
  );
}

/**
 * Why a handler cannot take this message the way it came, or undefined when it can: a request
 * must come as an ask and anything else one-way; a self-message only from this endpoint's env.
 */
export function misrouted(
  handler: BoundHandler,
  asked: boolean,
  sender: RpcSenderContext,
  endpoint: RpcEndpoint,
): RpcError | undefined {
  // Every message passes here: the common case costs two comparisons.
  if (handler.isRequest === asked && !handler.selfOnly) return undefined;
  const def = handler.def;
  if (handler.selfOnly && sender.senderAddress !== endpoint.rpcEnv?.address) {
    return unsupported({ type: def.type }, sender);
  }
  if (handler.isRequest === asked) return undefined;
  const isRequest = handler.isRequest;
  return new RpcError(
    RpcErrorCode.UnsupportedMessage,
    isRequest
      ? `${def.type} is a request: send it as an ask (a JSON-RPC request with an id), which is answered with ${def.replies?.map((d) => d.type).join(' or ')}`
      : `${def.type} is one-way: send it as a notification (a JSON-RPC request without an id); it gets no reply`,
  );
}
