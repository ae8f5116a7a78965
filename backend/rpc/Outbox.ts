import type { Session } from './Session.js';

/** Something waiting to go out to a peer. */
export interface OutboxItem {
  /** Writes the item; may throw (a frame too large), which the caller sees. */
  run(conn: Session): void;
  fail(err: Error): void;
}

/**
 * Everything sent to one remote address (Spark's Outbox). It connects lazily on the first send,
 * queues what is sent meanwhile and writes it in order once connected, or fails all of it if the
 * connection cannot be made. After a failure or a disconnect the env drops the outbox, so the next
 * send tries to connect again.
 */
export class Outbox {
  private conn: Session | undefined;
  private queue: OutboxItem[] = [];
  private connecting = false;
  private stopped: Error | undefined;

  constructor(
    readonly address: string,
    private readonly connect: () => Promise<Session>,
    private readonly onConnectFailed: (outbox: Outbox, err: Error) => void,
    /** Decides which connection to use when the peer dialled us meanwhile (see Connections). */
    private readonly onConnected: (outbox: Outbox, conn: Session) => void = (o, c) => o.attach(c),
  ) {}

  get connection(): Session | undefined {
    return this.conn?.isOpen ? this.conn : undefined;
  }

  get isConnecting(): boolean {
    return this.connecting;
  }

  /**
   * Uses a connection the peer opened to us, so one TCP connection serves both directions. Unless
   * `replace`, a connection already open stays in use; returns the one it replaced, if any.
   */
  attach(conn: Session, replace = false): Session | undefined {
    const old = this.conn?.isOpen ? this.conn : undefined;
    if (old && (!replace || old === conn)) return undefined;
    this.conn = conn;
    this.flush();
    return old;
  }

  send(item: OutboxItem): void {
    if (this.stopped) {
      item.fail(this.stopped);
      return;
    }
    const open = this.connection;
    if (open && this.queue.length === 0) {
      item.run(open);
      return;
    }
    this.queue.push(item);
    if (!open && !this.connecting) this.start();
  }

  /** Fails whatever is still queued; later sends fail at once with `err`. */
  stop(err: Error): void {
    this.stopped = err;
    this.failAll(err);
  }

  private start(): void {
    this.connecting = true;
    this.connect().then(
      (conn) => {
        this.connecting = false;
        this.onConnected(this, conn);
        this.flush();
      },
      (err: Error) => {
        this.connecting = false;
        this.failAll(err);
        this.onConnectFailed(this, err);
      },
    );
  }

  private flush(): void {
    const conn = this.connection;
    if (!conn) return;
    const items = this.queue;
    this.queue = [];
    for (const item of items) {
      try {
        item.run(conn);
      } catch (err) {
        item.fail(err as Error);
      }
    }
  }

  private failAll(err: Error): void {
    const items = this.queue;
    this.queue = [];
    for (const item of items) item.fail(err);
  }
}

/**
 * The outbox of a ref bound to one connection: it writes there, or fails once that connection is
 * closed — it never dials, so nothing meant for that peer reaches whoever listens at its address.
 */
export class BoundOutbox {
  constructor(private readonly session: Session) {}

  get connection(): Session | undefined {
    return this.session.isOpen ? this.session : undefined;
  }

  send(item: OutboxItem): void {
    if (!this.session.isOpen) {
      item.fail(this.session.stream.closedError());
      return;
    }
    try {
      item.run(this.session);
    } catch (err) {
      item.fail(err as Error);
    }
  }
}
