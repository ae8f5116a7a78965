import type { MessageOf, WireMessage } from '../protocol/registry.js';
import {
  type MasterStateEvent,
  type MasterStateResponse,
  SubscribeMasterState,
  UnsubscribeMasterState,
} from '../protocol/state.js';
import {
  RpcEndpoint,
  type RpcEndpointRef,
  type RpcSenderContext,
  unsupported,
} from '../rpc/index.js';
import { applyEvent } from './applyEvent.js';

export { applyEvent };

type State = MessageOf<typeof MasterStateResponse>;

/**
 * A live copy of a master's state: one snapshot, then every pushed MasterStateEvent applied to it,
 * in order. The CLI waits on it, and the agent feeds VS Code from it; neither polls.
 */
export class MasterStateMirror extends RpcEndpoint {
  state: State | undefined;
  private listeners = new Set<(state: State) => void>();

  /** Events received while a subscription's snapshot is on its way; see subscribe. */
  private early: MessageOf<typeof MasterStateEvent>[] | undefined;

  /** Subscribes to `master`; resolves with the snapshot. */
  async subscribe(master: RpcEndpointRef): Promise<State> {
    this.early ??= [];
    try {
      const snapshot = await master.ask(SubscribeMasterState({ subscriber: this.self.toData() }));
      // Events with seq ≤ the snapshot's are already in it.
      if (!this.state || this.state.seq < snapshot.seq) this.state = snapshot;
    } finally {
      // The master pushes events as soon as it has replied, and they can reach this endpoint
      // before the reply has resolved the ask: they were kept, and apply after the snapshot.
      const early = this.early ?? [];
      this.early = undefined;
      for (const e of early) this.apply(e);
      this.emit();
    }
    return this.state;
  }

  unsubscribe(master: RpcEndpointRef): void {
    master.send(UnsubscribeMasterState({ subscriber: this.self.toData() }));
  }

  /** Calls `fn` with the state after each change; returns a function that stops it. */
  onChange(fn: (state: State) => void): () => void {
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

  override receive(message: WireMessage, sender: RpcSenderContext): void {
    if (message.type !== 'MasterStateEvent') throw unsupported(message, sender);
    const event = message as MessageOf<typeof MasterStateEvent>;
    if (this.early) this.early.push(event);
    else if (this.apply(event)) this.emit();
  }

  private apply(event: MessageOf<typeof MasterStateEvent>): boolean {
    const s = this.state;
    if (!s || event.seq <= s.seq) return false;
    applyEvent(s, event);
    return true;
  }

  private emit(): void {
    const s = this.state;
    if (!s) return;
    for (const fn of [...this.listeners]) fn(s);
  }
}
