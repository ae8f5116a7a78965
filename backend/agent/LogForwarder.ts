import { LogFollower } from '../client/LogFollower.js';
import type { RpcEndpointRef } from '../rpc/index.js';
import type { AgentSink } from './Agent.js';
import type { FollowLogParams } from './protocol.js';

/**
 * The agent's one follower endpoint for every log the extension follows: workers push LogChunk
 * here and it passes them on under the extension's follow id, in order, as the base64 the worker
 * sent (no decoding and encoding again on the way).
 */
export class LogForwarder extends LogFollower {
  constructor(private readonly sink: AgentSink) {
    super('The agent stopped');
  }

  /** Follows a log for the extension; resolves once the worker has started pushing. */
  async forward(worker: RpcEndpointRef, p: FollowLogParams): Promise<{ totalSize: number }> {
    const r = await this.follow(
      worker,
      { source: p.source, stream: p.stream, offset: p.offset, followId: p.followId },
      {
        chunk: (c) => this.sink.logChunk(p.followId, c.offset, c.data),
        ended: (totalSize, reason) => this.sink.logFollowEnded(p.followId, totalSize, reason),
      },
    );
    return { totalSize: r.totalSize };
  }
}
