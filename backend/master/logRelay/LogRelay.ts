import { randomBytes } from 'node:crypto';
import { bytesOf } from '../../protocol/base64.js';
import { RpcError, RpcErrorCode } from '../../protocol/errors.js';
import type { MessageOf } from '../../protocol/registry.js';
import {
  FollowLog,
  LogChunk,
  LogFollowEnded,
  LogFollowStarted,
  RequestLogRange,
  StopFollowLog,
} from '../../protocol/worker.js';
import { RpcEndpoint, type RpcEndpointRef, type RpcSenderContext } from '../../rpc/index.js';
import { LookupFailed } from '../../shared/logLookup.js';
import { describeLogSource, type LogSource } from '../../shared/logSource.js';
import { type RelayedFollow, RelayedFollows } from './RelayedFollows.js';

/** How long the master waits for a worker's answer to a relayed ask. */
const WORKER_ASK_TIMEOUT_MS = 30_000;
/**
 * Past this many unsent bytes to a client, a relayed follow ends (saying from which offset to
 * follow again): the worker slows down only for the master's own backlog, so without this a slow
 * client over a thin tunnel would make the master buffer the whole log.
 */
export const MAX_CLIENT_BACKLOG = 32 * 1024 * 1024;

export interface LogRelayOptions {
  /** The Worker endpoint that holds a log, from the master's tables; throws LookupFailed. */
  locate(source: LogSource): RpcEndpointRef;
  /** wick.ui.reverseProxy.maxFollowsPerClient */
  maxFollowsPerClient: number;
  /** wick.ui.reverseProxy.maxTotalBacklog: unsent bytes for all clients together. */
  maxTotalBacklog?: number;
  /** Throws (a refusal) when the sender may not read this log: a user's token reads its own. */
  authorize?(sender: RpcSenderContext, source: LogSource): void;
}

/**
 * The master's relay of the workers' log messages (Spark's spark.ui.reverseProxy, for Wick's RPC
 * log API): a client sends RequestLogRange, FollowLog and StopFollowLog here exactly as it would to
 * a worker, and the master passes them on to the worker that holds the log, over the connection
 * it already has with that worker (which the worker opened: a worker the client cannot dial is
 * fine). For a follow the master is the worker's follower and passes each chunk on under the
 * client's follow id. A relayed follow ends once, whichever side goes first: the worker's end,
 * the client's StopFollowLog, either's disconnection (the worker is then told to stop: no
 * subscription outlives its client), a client too far behind, or the master stopping.
 *
 * Concurrent: a relayed ask waits for a worker, and one slow worker must not hold up the others'
 * chunks. Its state is only touched between awaits.
 */
export class LogRelay extends RpcEndpoint {
  override readonly concurrent = true;
  readonly follows = new RelayedFollows();
  private total = 0;
  private totalAt = 0;

  constructor(private readonly options: LogRelayOptions) {
    super();
    this.on(RequestLogRange, async (msg, ctx) => {
      const worker = this.locate(msg, ctx);
      this.log.debug(`Relaying RequestLogRange from ${ctx.senderAddress} to ${worker.address}`);
      return worker.ask(RequestLogRange({ ...msg }), { timeout: WORKER_ASK_TIMEOUT_MS });
    });
    this.on(FollowLog, (msg, ctx) => this.follow(msg, ctx));
    this.on(StopFollowLog, (msg, sender) => this.stopByClient(msg.followId, sender));
    this.on(LogChunk, (c) => this.chunk(c));
    this.on(LogFollowEnded, (e) => {
      const f = this.follows.byRelay(e.followId);
      if (f) this.end(f, e.totalSize, e.reason, false);
    });
  }

  private locate(
    msg: { appId?: string; execId?: number; driverId?: string },
    sender: RpcSenderContext,
  ): RpcEndpointRef {
    let source: LogSource;
    if (msg.driverId !== undefined && msg.appId === undefined && msg.execId === undefined) {
      source = { driverId: msg.driverId };
    } else if (msg.appId !== undefined && msg.execId !== undefined && msg.driverId === undefined) {
      source = { appId: msg.appId, execId: msg.execId };
    } else {
      throw new RpcError(
        RpcErrorCode.InvalidParams,
        'A log is named by appId and execId (an executor) or by driverId (a driver), not both',
      );
    }
    this.options.authorize?.(sender, source);
    try {
      return this.options.locate(source);
    } catch (err) {
      if (err instanceof LookupFailed) {
        throw new RpcError(
          RpcErrorCode.InvalidParams,
          `The master cannot relay the log of ${describeLogSource(source)}: ${err.message}`,
        );
      }
      throw err;
    }
  }

  private async follow(
    msg: MessageOf<typeof FollowLog>,
    ctx: RpcSenderContext,
  ): Promise<MessageOf<typeof LogFollowStarted>> {
    const clientAddress = ctx.senderAddress;
    if (msg.follower.address !== clientAddress) {
      // The master pushes only back to whoever asked: never a log to a third party.
      throw new RpcError(
        RpcErrorCode.InvalidParams,
        `Invalid follower ${JSON.stringify(msg.follower.address)}: a follow through the master pushes to an endpoint of the asking RpcEnv, ${clientAddress}`,
      );
    }
    const worker = this.locate(msg, ctx);
    // A new follow under the same id replaces the old one, as on a worker.
    const old = this.follows.byClient(clientAddress, msg.followId);
    if (old) this.end(old, old.next, 'replaced by a new follow with the same id', true, false);
    const open = this.follows.countFor(clientAddress);
    const max = this.options.maxFollowsPerClient;
    if (open >= max) {
      throw new RpcError(
        RpcErrorCode.InvalidParams,
        `Too many log follows through the master for ${clientAddress}: ${open} are open, and wick.ui.reverseProxy.maxFollowsPerClient is ${max}; stop one first`,
      );
    }
    const f: RelayedFollow = {
      relayId: randomBytes(8).toString('hex'),
      clientAddress,
      // Back over the connection that asked, never to whoever listens at an address.
      client: ctx.connection
        ? this.rpcEnv.refOver(ctx.connection, msg.follower.name)
        : this.rpcEnv.endpointRef(msg.follower),
      clientFollowId: msg.followId,
      worker,
      next: msg.offset,
    };
    // Registered before asking: the worker may push its first chunk right after its reply.
    this.follows.add(f);
    this.log.debug(
      `Relaying FollowLog ${msg.followId} from ${clientAddress} to ${worker.address} as ${f.relayId}`,
    );
    try {
      const started = await worker.ask(
        FollowLog({ ...msg, followId: f.relayId, follower: this.self.toData() }),
        { timeout: WORKER_ASK_TIMEOUT_MS },
      );
      return LogFollowStarted({ followId: msg.followId, totalSize: started.totalSize });
    } catch (err) {
      this.follows.remove(f);
      throw err;
    }
  }

  private chunk(c: MessageOf<typeof LogChunk>): void {
    const f = this.follows.byRelay(c.followId);
    if (!f) return;
    const backlog = this.rpcEnv.backlog(f.client).bytes;
    if (backlog > MAX_CLIENT_BACKLOG) {
      const mib = Math.round(MAX_CLIENT_BACKLOG / (1024 * 1024));
      this.end(
        f,
        f.next,
        `The master stopped relaying this log: the client fell more than ${mib} MiB behind; follow again from offset ${f.next}`,
        true,
      );
      return;
    }
    const max = this.options.maxTotalBacklog;
    if (max !== undefined && backlog > 0 && this.totalBacklog() > max) {
      // A client that keeps up (nothing unsent) still gets its chunk: only those behind are cut.
      const mib = Math.round(max / (1024 * 1024));
      this.end(
        f,
        f.next,
        `The master stopped relaying this log: its log clients together fell more than ${mib} MiB behind (wick.ui.reverseProxy.maxTotalBacklog); follow again from offset ${f.next}`,
        true,
      );
      return;
    }
    const data = bytesOf(c, 'data');
    const head: Omit<MessageOf<typeof LogChunk>, 'data'> = {
      type: LogChunk.type,
      followId: f.clientFollowId,
      offset: c.offset,
    };
    try {
      this.rpcEnv.sendWithBytes(f.client, head, 'data', data);
    } catch {
      // The client's env is gone: its disconnection ends the follow.
    }
    f.next = Math.max(f.next, c.offset + data.length);
  }

  /**
   * The unsent bytes to every client that follows through the relay, each client counted once;
   * worked out at most every 20 ms, as chunks come in bursts and clients are many.
   */
  private totalBacklog(): number {
    const now = Date.now();
    if (now - this.totalAt < 20) return this.total;
    const seen = new Set<string>();
    let total = 0;
    for (const f of this.follows.all()) {
      if (seen.has(f.clientAddress)) continue;
      seen.add(f.clientAddress);
      total += this.rpcEnv.backlog(f.client).bytes;
    }
    this.total = total;
    this.totalAt = now;
    return total;
  }

  private stopByClient(followId: string, sender: RpcSenderContext): void {
    const f = this.follows.byClient(sender.senderAddress, followId);
    if (f) this.end(f, f.next, 'stopped by the follower', true, false);
  }

  override onDisconnected(address: string): void {
    for (const f of this.follows.touching(address)) {
      if (f.clientAddress === address) {
        this.end(f, f.next, 'the client disconnected', true, false);
      } else {
        this.end(
          f,
          f.next,
          `The worker at ${address} went away (the log was relayed by the master)`,
          false,
        );
      }
    }
  }

  override onStop(): void {
    for (const f of this.follows.all()) this.end(f, f.next, 'The master stopped', true);
  }

  /**
   * Ends a relayed follow once: tells the worker to stop pushing (unless it is the one that ended
   * it) and the client that no more chunks come (unless it is the one that left or asked).
   */
  private end(
    f: RelayedFollow,
    totalSize: number,
    reason: string,
    stopWorker: boolean,
    tellClient = true,
  ): void {
    if (!this.follows.remove(f)) return;
    this.log.debug(`Relayed follow ${f.relayId} for ${f.clientAddress} ended: ${reason}`);
    if (stopWorker) sendQuietly(f.worker, StopFollowLog({ followId: f.relayId }));
    if (tellClient) {
      sendQuietly(f.client, LogFollowEnded({ followId: f.clientFollowId, totalSize, reason }));
    }
  }
}

/** A send to a peer that may be gone: its disconnection is handled where it is noticed. */
function sendQuietly(ref: RpcEndpointRef, message: Parameters<RpcEndpointRef['send']>[0]): void {
  try {
    ref.send(message);
  } catch {
    // The env is stopping, or the peer's outbox has failed.
  }
}
