import type { WireMessage } from '../protocol/registry.js';
import { getLogger } from '../util/log.js';
import { RpcError, RpcErrorCode } from './errors.js';
import type { RpcEndpointRef } from './RpcEndpointRef.js';
import type { RpcEnv } from './RpcEnv.js';

/** Where a one-way message came from. */
export interface RpcSenderContext {
  /** The sender's RpcEnv: `host:port`, or `client-<id>` for a client-mode env. */
  readonly senderAddress: string;
}

/** Where an ask came from, and how to answer it (Spark's RpcCallContext). */
export interface RpcCallContext extends RpcSenderContext {
  reply(response: WireMessage): void;
  sendFailure(err: unknown): void;
}

/**
 * An endpoint, with Spark's documented lifecycle:
 *
 *   constructor → onStart → receive* / receiveAndReply* → onStop
 *
 * onStart is always handled first. Messages arrive one at a time, in order: each handler is
 * awaited before the next message is handed over, so an endpoint's state needs no locks even when
 * its handlers await (JavaScript interleaves at every await; serialising handlers is what makes
 * Spark's ThreadSafeRpcEndpoint guarantee hold here). Set `concurrent` to opt out.
 *
 * receiveAndReply may answer by returning the reply, or later through ctx.reply / ctx.sendFailure.
 * A handler that throws fails the caller's ask with its message and reaches onError; the
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

  onStart(): void | Promise<void> {}

  receive(message: WireMessage, sender: RpcSenderContext): void | Promise<void> {
    throw unsupported(message, sender);
  }

  receiveAndReply(message: WireMessage, ctx: RpcCallContext): unknown {
    throw unsupported(message, ctx);
  }

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
