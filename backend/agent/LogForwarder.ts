import type { MessageOf, WireMessage } from '../protocol/registry.js';
import {
  FollowLog,
  type LogChunk,
  type LogFollowEnded,
  StopFollowLog,
} from '../protocol/worker.js';
import {
  RpcEndpoint,
  type RpcEndpointRef,
  type RpcSenderContext,
  unsupported,
} from '../rpc/index.js';
import type { AgentSink } from './Agent.js';
import type { LogSource, LogStream } from './protocol.js';

/**
 * The agent's one follower endpoint for every log the extension follows: workers push LogChunk
 * here and it passes them on under the same follow id, in order.
 */
export class LogForwarder extends RpcEndpoint {
  private readonly follows = new Map<string, RpcEndpointRef>();

  constructor(private readonly sink: AgentSink) {
    super();
  }

  async follow(
    worker: RpcEndpointRef,
    p: { followId: string; source: LogSource; stream: LogStream; offset: number },
  ): Promise<{ totalSize: number }> {
    this.follows.set(p.followId, worker);
    try {
      const r = await worker.ask(
        FollowLog({
          ...p.source,
          stream: p.stream,
          followId: p.followId,
          offset: p.offset,
          follower: this.self.toData(),
        }),
      );
      return { totalSize: r.totalSize };
    } catch (err) {
      this.follows.delete(p.followId);
      throw err;
    }
  }

  stop(followId: string): void {
    const worker = this.follows.get(followId);
    this.follows.delete(followId);
    worker?.send(StopFollowLog({ followId }));
  }

  stopAll(): void {
    for (const id of [...this.follows.keys()]) this.stop(id);
  }

  override onDisconnected(remoteAddress: string): void {
    for (const [id, w] of this.follows) {
      if (w.address !== remoteAddress) continue;
      this.follows.delete(id);
      this.sink.logFollowEnded(id, -1, `The worker at ${remoteAddress} went away`);
    }
  }

  override receive(message: WireMessage, sender: RpcSenderContext): void {
    if (message.type === 'LogChunk') {
      const c = message as MessageOf<typeof LogChunk>;
      if (this.follows.has(c.followId)) this.sink.logChunk(c.followId, c.offset, c.data);
      return;
    }
    if (message.type === 'LogFollowEnded') {
      const e = message as MessageOf<typeof LogFollowEnded>;
      if (this.follows.delete(e.followId))
        this.sink.logFollowEnded(e.followId, e.totalSize, e.reason);
      return;
    }
    throw unsupported(message, sender);
  }
}
