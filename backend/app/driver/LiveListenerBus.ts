import {
  listenerEvents,
  type WickListenerEvent,
  type WickListenerEventName,
  type WickListenerEventOf,
} from '../../protocol/listener.js';
import { getLogger, type Logger } from '../../util/log.js';

/** What hears a bus's events: one kind of them (`on`), or every one (`onEvent`). */
type Handler<E> = (event: E) => void;

/**
 * The driver's one bus for what happens in it (Spark's LiveListenerBus): the DriverEndpoint and
 * the application's client post executors added and removed, workers lost and tasks ended; the
 * DAGScheduler, the client and the application's listeners (WickContext.addListener) subscribe.
 * Events are the typed ones of protocol/listener.ts, so that what is posted here can later be
 * logged and sent as it is.
 *
 * Unlike Spark's, delivery is synchronous, in the driver's event loop: the scheduler's own parts
 * listen here, and what they do with an event (forget a lost executor's map outputs) must be done
 * before its poster goes on (reruns the executor's tasks). An event posted while one is being
 * delivered waits for that delivery to finish, so every subscriber hears events in the order they
 * were posted. A subscriber that throws is logged, and the others and the poster go on.
 */
export class LiveListenerBus {
  /**
   * Subscribers in the order they subscribed, each with the kind it hears (undefined: all). The
   * array is replaced, never changed, when one subscribes or leaves: a delivery goes on over the
   * array it began with (a subscriber added during it hears the next event), without copying it
   * for every event; and each kind's subscribers are kept apart, so that an event is offered only
   * to those who hear it (a task's start and end are posted for every task).
   */
  private handlers: readonly Entry[] = [];
  private byKind = new Map<WickListenerEventName, readonly Entry[]>();
  private readonly queue: WickListenerEvent[] = [];
  private delivering = false;

  constructor(private readonly log: Logger = getLogger('LiveListenerBus')) {}

  /** Subscribes to the events named `kind`; returns what unsubscribes. */
  on<K extends WickListenerEventName>(
    kind: K,
    handler: Handler<WickListenerEventOf<K>>,
  ): () => void {
    return this.add(kind, handler);
  }

  /** Subscribes to every event; returns what unsubscribes. */
  onEvent(handler: Handler<WickListenerEvent>): () => void {
    return this.add(undefined, handler);
  }

  /** Tells every subscriber to the event, in the order they subscribed. */
  post(event: WickListenerEvent): void {
    this.queue.push(event);
    if (this.delivering) return;
    this.delivering = true;
    try {
      for (let e = this.queue.shift(); e !== undefined; e = this.queue.shift()) this.deliver(e);
    } finally {
      this.delivering = false;
    }
  }

  /** Whether anything hears events named `kind` (a poster may then skip making them). */
  hears(kind: WickListenerEventName): boolean {
    return (this.byKind.get(kind)?.length ?? 0) > 0;
  }

  /** How many subscribers there are (tests). */
  get size(): number {
    return this.handlers.length;
  }

  private add(kind: WickListenerEventName | undefined, fn: Handler<never>): () => void {
    const entry: Entry = { kind, fn };
    this.handlers = [...this.handlers, entry];
    this.index();
    return () => {
      if (!this.handlers.includes(entry)) return;
      this.handlers = this.handlers.filter((h) => h !== entry);
      this.index();
    };
  }

  /** Each kind's subscribers (and those of every event), in subscription order. */
  private index(): void {
    const byKind = new Map<WickListenerEventName, Entry[]>();
    for (const h of this.handlers) {
      for (const kind of h.kind === undefined ? allKinds : [h.kind]) {
        const list = byKind.get(kind);
        if (list) list.push(h);
        else byKind.set(kind, [h]);
      }
    }
    this.byKind = byKind;
  }

  private deliver(event: WickListenerEvent): void {
    const handlers = this.byKind.get(event.event);
    if (!handlers) return;
    for (const { fn } of handlers) {
      try {
        (fn as Handler<WickListenerEvent>)(event);
      } catch (err) {
        this.log.error(`A listener of ${event.event} threw an exception`, err);
      }
    }
  }
}

interface Entry {
  kind: WickListenerEventName | undefined;
  fn: Handler<never>;
}

const allKinds: readonly WickListenerEventName[] = listenerEvents.map(
  (e) => e.properties.event.const as WickListenerEventName,
);
