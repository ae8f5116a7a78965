import { MAX_STATE_PAGE_ENTRIES } from '../protocol/bounds.js';
import type { MessageOf } from '../protocol/registry.js';
import {
  MasterStateEvent,
  type MasterStateResponse,
  MasterStateSubscriptionDropped,
  RequestMasterState,
  SubscribeMasterState,
  UnsubscribeMasterState,
} from '../protocol/state.js';
import { RpcEndpoint, type RpcEndpointRef } from '../rpc/index.js';
import { applyEvent } from '../shared/applyEvent.js';
import { StatePages } from '../shared/statePages.js';

export { applyEvent };

type State = MessageOf<typeof MasterStateResponse>;
type Event = MessageOf<typeof MasterStateEvent>;

/**
 * Called with the state after each change: with the event that made it, or with none for a
 * (re)subscription's snapshot.
 */
export type MirrorListener = (state: State, event?: Event) => void;

/**
 * A live copy of a master's state: one snapshot, then every pushed MasterStateEvent applied to it,
 * in order. The CLI waits on it, the agent feeds VS Code from it, the master's web UI feeds its
 * pages from it; none polls. After a failover, subscribing to the new master replaces the copy
 * (its changes are numbered afresh). The snapshot is read in pages (StatePages merges them with
 * the changes that cross them). A master that drops this subscriber because it fell behind says
 * so (MasterStateSubscriptionDropped, on a connection it keeps) and the mirror subscribes again.
 */
export class MasterStateMirror extends RpcEndpoint {
  state: State | undefined;
  /** Called when the connection to the master subscribed to drops (its host:port). */
  onMasterLost: (address: string) => void = () => {};
  private listeners = new Set<MirrorListener>();
  private master: RpcEndpointRef | undefined;

  /** Events received while a subscription's snapshot is on its way; see subscribe. */
  private early: Event[] | undefined;
  private pages: StatePages | undefined;

  constructor() {
    super();
    this.on(MasterStateEvent, (event) => {
      if (this.early) this.early.push(event);
      else if (this.apply(event)) this.emit(event);
    });
    this.on(MasterStateSubscriptionDropped, (msg, ctx) => {
      const master = this.master;
      if (!master || master.address !== ctx.senderAddress) return;
      this.log.warn(`The master dropped this subscription (${msg.reason}); subscribing again`);
      void this.subscribe(master).catch((err) =>
        this.log.warn(`Could not subscribe again to ${master}`, err),
      );
    });
  }

  /** Whether a snapshot has come and is being kept up to date. */
  get ready(): boolean {
    return this.state !== undefined && this.early === undefined;
  }

  /** Subscribes to `master`; resolves with the snapshot (read in pages). */
  async subscribe(master: RpcEndpointRef): Promise<State> {
    this.early ??= [];
    this.master = master;
    const pages = new StatePages();
    try {
      const first = await master.ask(
        SubscribeMasterState({ subscriber: this.self.toData(), limit: MAX_STATE_PAGE_ENTRIES }),
      );
      pages.add(first);
      for (let after = first.next; after !== undefined; ) {
        const page = await master.ask(RequestMasterState({ limit: MAX_STATE_PAGE_ENTRIES, after }));
        pages.add(page);
        after = page.next;
      }
      this.pages = pages;
      this.state = pages.state;
    } finally {
      // The master pushes events as soon as it has replied, and they can reach this endpoint
      // before the replies have resolved the asks: they were kept, and apply after the pages.
      const early = this.early ?? [];
      this.early = undefined;
      for (const e of early) this.apply(e);
      this.emit(undefined);
    }
    return this.state as State;
  }

  unsubscribe(master: RpcEndpointRef): void {
    master.send(UnsubscribeMasterState({ subscriber: this.self.toData() }));
  }

  /** Calls `fn` with the state after each change; returns a function that stops it. */
  onChange(fn: MirrorListener): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Resolves with the first state for which `predicate` holds (now or after a change). */
  waitFor(predicate: (state: State) => boolean): Promise<State> {
    return new Promise((resolve) => {
      if (this.state && predicate(this.state)) return resolve(this.state);
      const off = this.onChange((s) => {
        if (predicate(s)) {
          off();
          resolve(s);
        }
      });
    });
  }

  override onDisconnected(remoteAddress: string): void {
    if (remoteAddress === this.master?.address) this.onMasterLost(remoteAddress);
  }

  private apply(event: Event): boolean {
    return this.pages?.apply(event) ?? false;
  }

  private emit(event: Event | undefined): void {
    const s = this.state;
    if (!s) return;
    for (const fn of [...this.listeners]) fn(s, event);
  }
}
