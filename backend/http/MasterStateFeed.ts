import type { MasterStateMirror } from '../client/MasterStateMirror.js';
import type { MessageOf } from '../protocol/registry.js';
import type { MasterStateEvent, MasterStateResponse } from '../protocol/state.js';
import { RunningTotals, UtilizationHistory } from '../shared/utilization.js';

type State = MessageOf<typeof MasterStateResponse>;
type Event = MessageOf<typeof MasterStateEvent>;

/** One page's event stream, as the feed writes to it. */
export interface StateFeed {
  snapshot(state: State, history: UtilizationHistory): void;
  change(event: Event): void;
}

/**
 * The master's web UI fans its one subscription to the Master (a MasterStateMirror) out to the
 * pages' event streams: each stream gets the state when it opens, then every change as it was
 * pushed; the chart's history is recorded as the changes come.
 */
export class MasterStateFeed {
  readonly history = new UtilizationHistory();
  private readonly totals = new RunningTotals();
  private readonly feeds = new Set<StateFeed>();

  constructor(
    readonly mirror: MasterStateMirror,
    private readonly now: () => number = Date.now,
  ) {
    mirror.onChange((state, event) => {
      if (event) this.totals.apply(event);
      else this.totals.reset(state);
      this.history.recordTotals(this.totals.totals, this.now());
      for (const f of this.feeds) {
        if (event) f.change(event);
        else f.snapshot(state, this.history);
      }
    });
  }

  get state(): State | undefined {
    return this.mirror.state;
  }

  /** Feeds `feed` the state now (when there is one) and every change after it. */
  feed(feed: StateFeed): () => void {
    this.feeds.add(feed);
    if (this.mirror.ready && this.mirror.state) feed.snapshot(this.mirror.state, this.history);
    return () => this.feeds.delete(feed);
  }
}
