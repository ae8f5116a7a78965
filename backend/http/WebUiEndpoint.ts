import { applyEvent } from '../client/applyEvent.js';
import type { MessageOf, WireMessage } from '../protocol/registry.js';
import {
  type MasterStateEvent,
  type MasterStateResponse,
  SubscribeMasterState,
} from '../protocol/state.js';
import type { LogChunk, LogFollowEnded } from '../protocol/worker.js';
import {
  RpcEndpoint,
  type RpcEndpointRef,
  type RpcSenderContext,
  unsupported,
} from '../rpc/index.js';
import { UtilizationHistory } from './utilization.js';

type State = MessageOf<typeof MasterStateResponse>;
type Event = MessageOf<typeof MasterStateEvent>;

export interface StateFeed {
  snapshot(state: State, history: UtilizationHistory): void;
  change(event: Event): void;
}

export interface FollowHandlers {
  /** host:port of the worker that pushes the chunks. */
  address: string;
  chunk(offset: number, data: string): void;
  ended(totalSize: number, reason: string): void;
}

/**
 * The web UI's endpoint in its daemon's RpcEnv. On a master it subscribes to the Master's state
 * (one snapshot, then every pushed MasterStateEvent) and fans the changes out to the pages'
 * event streams, recording the chart's history as they come; on a master or a worker it is the
 * follower of the log follows that pages open.
 */
export class WebUiEndpoint extends RpcEndpoint {
  static readonly ENDPOINT_NAME = 'WebUI';

  state: State | undefined;
  readonly history = new UtilizationHistory();
  private readonly feeds = new Set<StateFeed>();
  private readonly follows = new Map<string, FollowHandlers>();
  private early: Event[] | undefined;

  constructor(private readonly now: () => number = Date.now) {
    super();
  }

  /** Subscribes to the Master; the state and its changes then reach every feed. */
  async subscribe(master: RpcEndpointRef): Promise<void> {
    this.early ??= [];
    try {
      const snapshot = await master.ask(SubscribeMasterState({ subscriber: this.self.toData() }));
      if (!this.state || this.state.seq < snapshot.seq) this.state = snapshot;
    } finally {
      // Events can overtake the reply that carries the snapshot; they apply after it.
      const early = this.early ?? [];
      this.early = undefined;
      if (this.state) {
        for (const e of early) this.apply(e, false);
        this.history.record(this.state, this.now());
        for (const f of this.feeds) f.snapshot(this.state, this.history);
      }
    }
  }

  /** Feeds `feed` the state now (when there is one) and every change after it. */
  feed(feed: StateFeed): () => void {
    this.feeds.add(feed);
    if (this.state && !this.early) feed.snapshot(this.state, this.history);
    return () => this.feeds.delete(feed);
  }

  addFollow(followId: string, handlers: FollowHandlers): () => void {
    this.follows.set(followId, handlers);
    return () => this.follows.delete(followId);
  }

  override receive(message: WireMessage, sender: RpcSenderContext): void {
    switch (message.type) {
      case 'MasterStateEvent': {
        const e = message as Event;
        if (this.early) this.early.push(e);
        else this.apply(e, true);
        return;
      }
      case 'LogChunk': {
        const m = message as MessageOf<typeof LogChunk>;
        this.follows.get(m.followId)?.chunk(m.offset, m.data);
        return;
      }
      case 'LogFollowEnded': {
        const m = message as MessageOf<typeof LogFollowEnded>;
        const f = this.follows.get(m.followId);
        this.follows.delete(m.followId);
        f?.ended(m.totalSize, m.reason);
        return;
      }
      default:
        throw unsupported(message, sender);
    }
  }

  override onDisconnected(address: string): void {
    for (const [id, f] of this.follows) {
      if (f.address !== address) continue;
      this.follows.delete(id);
      f.ended(-1, 'the worker disconnected');
    }
  }

  override onStop(): void {
    for (const [id, f] of this.follows) {
      this.follows.delete(id);
      f.ended(-1, 'the web UI stopped');
    }
  }

  private apply(e: Event, emit: boolean): void {
    const s = this.state;
    if (!s || e.seq <= s.seq) return;
    applyEvent(s, e);
    this.history.record(s, this.now());
    if (emit) for (const f of this.feeds) f.change(e);
  }
}
