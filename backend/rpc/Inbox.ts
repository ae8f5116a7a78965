import { RpcError, RpcErrorCode } from '../protocol/errors.js';
import type { WireMessage } from '../protocol/registry.js';
import { getLogger } from '../util/log.js';
import {
  misrouted,
  type RpcCallContext,
  type RpcEndpoint,
  type RpcSenderContext,
  unsupported,
} from './RpcEndpoint.js';
import { logRefusal, Refused, refuse } from './refusals.js';

export type InboxMessage =
  | { kind: 'OnStart' }
  | { kind: 'OnStop' }
  | { kind: 'OneWay'; message: WireMessage; sender: RpcSenderContext }
  | { kind: 'Rpc'; message: WireMessage; ctx: RpcCallContext }
  | { kind: 'Connected'; address: string }
  | { kind: 'Disconnected'; address: string }
  | { kind: 'NetworkError'; error: Error; address: string };

const log = getLogger('Inbox');

/** A handler's return value answers the ask, unless it is undefined (it answers through ctx). */
function answerRpc(ctx: RpcCallContext, v: unknown): void {
  if (v !== undefined) ctx.reply(v as WireMessage);
}

const resolved = Promise.resolve();
const noop = () => {};

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return typeof (v as PromiseLike<unknown> | null)?.then === 'function';
}

/**
 * One endpoint's queue (Spark's Inbox). OnStart is queued at construction, so it is always
 * handled first; OnStop is queued by stop() and is the last thing handled. A serial endpoint's
 * handlers are awaited one by one; a concurrent endpoint's are started in order without waiting.
 * Sync handlers are not awaited at all, which keeps the hot path free of extra microtasks.
 */
export class Inbox {
  private queue: InboxMessage[] = [{ kind: 'OnStart' }];
  private head = 0;
  private draining = false;
  private started = false;
  private stopping = false;
  private readonly stoppedPromise: Promise<void>;
  private resolveStopped!: () => void;
  private inFlight = 0;

  constructor(
    readonly name: string,
    private readonly endpoint: RpcEndpoint,
  ) {
    this.stoppedPromise = new Promise((r) => {
      this.resolveStopped = r;
    });
    this.schedule();
  }

  get isStopped(): boolean {
    return this.stopping;
  }

  /** Queues a message; after stop() an ask is failed with "RpcEnv stopped" instead. */
  post(msg: InboxMessage): void {
    if (this.stopping) {
      if (msg.kind === 'Rpc') {
        msg.ctx.sendFailure(
          new RpcError(
            RpcErrorCode.RpcEnvStopped,
            `RpcEnv stopped: endpoint ${this.name} is stopped`,
          ),
        );
      }
      return;
    }
    this.queue.push(msg);
    this.schedule();
  }

  /** Queues OnStop after whatever is queued; resolves once onStop has run. */
  stop(): Promise<void> {
    if (!this.stopping) {
      this.queue.push({ kind: 'OnStop' });
      this.stopping = true;
      this.schedule();
    }
    return this.stoppedPromise;
  }

  private schedule(): void {
    if (this.draining) return;
    this.draining = true;
    // A bare promise job, not queueMicrotask: Node wraps each of those in an AsyncResource, and a
    // drain is scheduled for nearly every message read from a socket.
    resolved.then(() => this.drain());
  }

  /**
   * Handles what is queued, synchronously for as long as handlers are; it returns when one must be
   * awaited and carries on when that one settles. `draining` stays true all the while.
   */
  private drain(): void {
    try {
      while (this.head < this.queue.length) {
        const msg = this.queue[this.head] as InboxMessage;
        if (msg.kind === 'OnStop' && this.inFlight > 0) {
          // OnStop of a concurrent endpoint waits for the handlers still running.
          setImmediate(() => this.drain());
          return;
        }
        this.queue[this.head++] = undefined as unknown as InboxMessage;
        if (this.head > 1024 && this.head * 2 > this.queue.length) {
          this.queue = this.queue.slice(this.head);
          this.head = 0;
        }
        const pending = this.handle(msg);
        if (!pending) continue;
        if (this.endpoint.concurrent && this.started && msg.kind !== 'OnStop') {
          this.inFlight++;
          void pending.finally(() => this.inFlight--);
          continue;
        }
        // handle()'s promises never reject: handlers' errors went to onError already.
        pending.then(() => this.drain());
        return;
      }
      this.draining = false;
    } catch (err) {
      this.draining = false;
      throw err;
    }
  }

  /** Runs one message; returns a promise only when the handler was async. */
  private handle(msg: InboxMessage): Promise<void> | undefined {
    const ep = this.endpoint;
    switch (msg.kind) {
      case 'OnStart':
        return this.guard(
          () => ep.onStart(),
          () => {
            this.started = true;
          },
        );
      case 'OnStop':
        return this.guard(
          () => ep.onStop(),
          () => this.resolveStopped(),
        );
      case 'OneWay':
        return this.handleOneWay(msg.message, msg.sender);
      case 'Rpc':
        return this.handleRpc(msg.message, msg.ctx);
      case 'Connected':
        return this.guard(() => ep.onConnected(msg.address));
      case 'Disconnected':
        return this.guard(() => ep.onDisconnected(msg.address));
      case 'NetworkError':
        return this.guard(() => ep.onNetworkError(msg.error, msg.address));
    }
  }

  // Every heartbeat passes here: a handler that returns at once costs no closure and no promise.
  private handleOneWay(message: WireMessage, sender: RpcSenderContext): Promise<void> | undefined {
    let result: unknown;
    try {
      const ep = this.endpoint;
      const handler = ep.handlerFor(message.type);
      if (!handler) throw unsupported(message, sender);
      // Who before how: a peer that may not send this at all is told so, however it sent it.
      const problem = ep.senderProblem(handler.def, message, sender);
      if (problem !== undefined) throw refuse(message.type, problem);
      const refused = misrouted(handler, false, sender, ep);
      if (refused) throw refused;
      result = handler.fn(message, sender as RpcCallContext);
    } catch (err) {
      this.reportFailure(message, sender, err);
      return undefined;
    }
    return isThenable(result)
      ? Promise.resolve(result).then(noop, (err) => this.reportFailure(message, sender, err))
      : undefined;
  }

  // Every ask passes here: a handler that answers at once costs no closure.
  private handleRpc(message: WireMessage, ctx: RpcCallContext): Promise<void> | undefined {
    let result: unknown;
    try {
      const ep = this.endpoint;
      const handler = ep.handlerFor(message.type);
      if (!handler) throw unsupported(message, ctx);
      const problem = ep.senderProblem(handler.def, message, ctx);
      if (problem !== undefined) throw refuse(message.type, problem);
      const refused = misrouted(handler, true, ctx, ep);
      if (refused) throw refused;
      result = handler.fn(message, ctx);
    } catch (err) {
      this.failRpc(message, ctx, err);
      return undefined;
    }
    if (isThenable(result)) {
      return Promise.resolve(result).then(
        (v) => answerRpc(ctx, v),
        (err) => this.failRpc(message, ctx, err),
      );
    }
    answerRpc(ctx, result);
    return undefined;
  }

  private failRpc(message: WireMessage, ctx: RpcCallContext, err: unknown): void {
    ctx.sendFailure(err);
    this.reportFailure(message, ctx, err);
  }

  /** A refusal is logged once per connection (refusals.ts); anything else reaches onError. */
  private reportFailure(message: WireMessage, sender: RpcSenderContext, err: unknown): void {
    if (err instanceof Refused) logRefusal(message.type, sender, err);
    else this.reportError(err);
  }

  /**
   * Runs a handler, reporting what it throws to onError. `after` runs whether or not it threw:
   * an endpoint whose onStart failed still receives messages, as in Spark.
   */
  private guard(fn: () => unknown, after?: () => void): Promise<void> | undefined {
    let result: unknown;
    try {
      result = fn();
    } catch (err) {
      this.reportError(err);
      after?.();
      return undefined;
    }
    if (isThenable(result)) {
      return Promise.resolve(result).then(
        () => after?.(),
        (err) => {
          this.reportError(err);
          after?.();
        },
      );
    }
    after?.();
    return undefined;
  }

  private reportError(err: unknown): void {
    const error = err instanceof Error ? err : new Error(String(err));
    try {
      this.endpoint.onError(error);
    } catch (inner) {
      log.error(`onError of endpoint ${this.name} threw`, inner);
    }
  }
}
