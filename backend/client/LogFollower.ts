import { randomBytes } from 'node:crypto';
import type { MessageOf } from '../protocol/registry.js';
import { FollowLog, LogChunk, LogFollowEnded, StopFollowLog } from '../protocol/worker.js';
import { RpcEndpoint, type RpcEndpointRef } from '../rpc/index.js';
import { type LogSource, type LogStream, logFields } from '../shared/logSource.js';

export type LogChunkMessage = MessageOf<typeof LogChunk>;

/** What a follow's owner does with what the worker pushes. */
export interface FollowHandlers {
  /** Bytes at `chunk.offset`, in order (`bytesOf(chunk, 'data')` decodes them once). */
  chunk(chunk: LogChunkMessage): void;
  /** No more chunks: the process exited and the file is drained (totalSize), or -1 when cut off. */
  ended(totalSize: number, reason: string): void;
}

export interface FollowRequest {
  source: LogSource;
  stream: LogStream;
  /** The byte to start from. */
  offset: number;
  /** Chosen by the caller (the extension names its follows); a random one by default. */
  followId?: string;
}

interface Follow {
  worker: RpcEndpointRef;
  handlers: FollowHandlers;
}

/**
 * The follower of every log a client follows (Worker's FollowLog): workers push LogChunk and
 * LogFollowEnded here, and each reaches the handlers of its follow id, in order. A follow ends
 * once, however it ends: by the worker, by stop(), by the worker's connection dropping, or by
 * this endpoint stopping.
 */
export class LogFollower extends RpcEndpoint {
  private readonly follows = new Map<string, Follow>();

  /** @param stoppedReason why the follows still open end when this endpoint stops. */
  constructor(private readonly stoppedReason = 'The client stopped') {
    super();
    this.on(LogChunk, (c) => this.follows.get(c.followId)?.handlers.chunk(c));
    this.on(LogFollowEnded, (e) => this.end(e.followId, e.totalSize, e.reason));
  }

  /**
   * Asks `worker` to push a log here; resolves once it has started (the worker checks the source
   * first: a bad one rejects here, with the worker's message). Chunks may reach the handlers
   * before this resolves.
   */
  async follow(
    worker: RpcEndpointRef,
    req: FollowRequest,
    handlers: FollowHandlers,
    timeout?: number,
  ): Promise<{ followId: string; totalSize: number }> {
    const followId = req.followId ?? randomBytes(8).toString('hex');
    this.follows.set(followId, { worker, handlers });
    try {
      const r = await worker.ask(
        FollowLog({
          ...logFields(req.source, req.stream),
          followId,
          offset: req.offset,
          follower: this.self.toData(),
        }),
        timeout === undefined ? undefined : { timeout },
      );
      return { followId, totalSize: r.totalSize };
    } catch (err) {
      this.follows.delete(followId);
      throw err;
    }
  }

  /** Tells the worker to stop pushing; the follow's handlers hear nothing more. */
  stop(followId: string): void {
    const f = this.follows.get(followId);
    this.follows.delete(followId);
    if (f && !this.rpcEnv.isStopped) f.worker.send(StopFollowLog({ followId }));
  }

  stopAll(): void {
    for (const id of [...this.follows.keys()]) this.stop(id);
  }

  override onDisconnected(remoteAddress: string): void {
    for (const [id, f] of this.follows) {
      if (f.worker.address === remoteAddress) {
        this.end(id, -1, `The worker at ${remoteAddress} went away`);
      }
    }
  }

  override onStop(): void {
    for (const id of [...this.follows.keys()]) this.end(id, -1, this.stoppedReason);
  }

  private end(followId: string, totalSize: number, reason: string): void {
    const f = this.follows.get(followId);
    if (!f) return;
    this.follows.delete(followId);
    f.handlers.ended(totalSize, reason);
  }
}
