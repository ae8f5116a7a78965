import type net from 'node:net';
import { RpcError, RpcErrorCode } from '../protocol/errors.js';
import type { MessageCatalog } from '../protocol/registry.js';
import type { Clock } from '../util/clock.js';
import { getLogger } from '../util/log.js';
import { dialHandshake } from './ClientHandshake.js';
import type { Credential, Principal } from './credentials.js';
import type { Dispatcher } from './Dispatcher.js';
import { FramedStream } from './FramedStream.js';
import type { HandshakeOptions } from './Handshake.js';
import { Outbox } from './Outbox.js';
import { isClientAddress, RpcAddress } from './RpcAddress.js';
import { acceptHandshake } from './ServerHandshake.js';
import { Session, type SessionHost } from './Session.js';
import { refusePlain } from './tls/refusePlain.js';
import { TlsPinError, type WireSecurity } from './tls/WireSecurity.js';

const log = getLogger('RpcEnv');

/** What the connections of an env need from it. */
export interface ConnectionsHost extends SessionHost {
  readonly address: string;
  readonly isClientMode: boolean;
  /** Stopping or stopped: accept nothing, and tell endpoints of no more network events. */
  readonly isStopped: boolean;
}

export interface ConnectionsOptions {
  readonly handshake: HandshakeOptions;
  readonly maxMessageSize: number;
  readonly protocol: MessageCatalog;
  /** Sockets that do not keep the process alive (RpcEnvOptions.unref). */
  readonly unref: boolean;
  readonly clock: Clock;
  /** Where Connected, Disconnected and NetworkError go: every endpoint. */
  readonly events: Pick<Dispatcher, 'postToAll'>;
  /** TLS on the wires that leave the machine (tls/WireSecurity.ts). */
  readonly security: WireSecurity;
}

/** An env's connections at one moment (Connections.stats). */
export interface ConnectionStats {
  /** Open sockets, those still handshaking included. */
  sockets: number;
  /** Sessions a peer opened to this env. */
  inbound: number;
  /** Sessions this env opened. */
  outbound: number;
  /** Peers with at least one open session. */
  peers: number;
}

/**
 * Every connection of one env: TCP at the edge (this is the only place a socket is made or
 * accepted), a handshake phase on each, the sessions they open, and one outbox per peer address
 * with the session it writes to. One connection per peer is used in both directions.
 */
export class Connections {
  private readonly outboxes = new Map<string, Outbox>();
  /** Every stream, handshaking or open: closeAll() closes them all. */
  private readonly streams = new Set<FramedStream>();
  /** Open sessions by peer: a peer is connected while it has at least one. */
  private readonly byPeer = new Map<string, Set<Session>>();
  /** Accepted sockets still at the TLS front (not yet a stream): closeAll() closes them too. */
  private readonly fronting = new Set<net.Socket>();

  constructor(
    private readonly env: ConnectionsHost,
    private readonly options: ConnectionsOptions,
  ) {}

  /**
   * What is open now, counted when asked (a metrics scrape) rather than on every connect: sockets
   * (handshaking ones too), sessions by direction, and the peers they reach.
   */
  stats(): ConnectionStats {
    let inbound = 0;
    let outbound = 0;
    for (const sessions of this.byPeer.values()) {
      for (const s of sessions) {
        if (s.direction === 'inbound') inbound++;
        else outbound++;
      }
    }
    return { sockets: this.streams.size, inbound, outbound, peers: this.byPeer.size };
  }

  /** The open session an outbox to `address` writes to, if any. */
  sessionTo(address: string): Session | undefined {
    return this.outboxes.get(address)?.connection;
  }

  /** The outbox for `address`, made (and connecting on its first send) if there is none. */
  outbox(address: string): Outbox {
    let outbox = this.outboxes.get(address);
    if (!outbox) {
      outbox = this.newOutbox(address);
      this.outboxes.set(address, outbox);
    }
    return outbox;
  }

  accept(socket: net.Socket): void {
    if (this.env.isStopped) {
      socket.destroy();
      return;
    }
    if (this.options.unref) socket.unref();
    socket.setNoDelay(true);
    const remote = `${socket.remoteAddress ?? '?'}:${socket.remotePort ?? '?'}`;
    const { security } = this.options;
    if (!security.serves) {
      this.acceptStream(socket, undefined, remote);
      return;
    }
    // Until its first byte says TLS or plain, a socket is no stream yet: bounded by the
    // handshake's timeout all the same, and closed with the env.
    this.fronting.add(socket);
    const timer = this.options.clock.setTimeout(
      () => socket.destroy(),
      this.options.handshake.timeoutMs,
    );
    socket.once('close', () => {
      timer.cancel();
      this.fronting.delete(socket);
    });
    security.accept(
      socket,
      ({ stream, binding }) => {
        timer.cancel();
        this.fronting.delete(socket);
        if (this.env.isStopped) stream.destroy();
        else this.acceptStream(stream, binding, remote);
      },
      (s, firstLine) => refusePlain(s, firstLine, this.env.address, security.fingerprint as string),
    );
  }

  private acceptStream(stream: net.Socket, binding: string | undefined, remote: string): void {
    const framed = this.track(stream, remote);
    framed.channelBinding = binding;
    acceptHandshake(framed, this.options.handshake, (peer, principal) =>
      this.open(framed, peer, principal, 'inbound'),
    ).catch(() => {
      // Refused (the handshake logged why), hung up or timed out: the stream is closed already.
    });
  }

  /**
   * Fails what is queued in outboxes and waiting on sessions, and leaves the connections open, so
   * that asks from peers still queued in an inbox get their replies (RpcEnv.stop()).
   */
  failPending(err: RpcError): void {
    for (const outbox of this.outboxes.values()) outbox.stop(err);
    this.outboxes.clear();
    for (const sessions of this.byPeer.values()) {
      for (const session of sessions) session.failPending(err);
    }
  }

  /** Closes every connection, letting what was written drain first. */
  closeAll(err: RpcError): void {
    for (const stream of this.streams) stream.close(err, true);
    for (const socket of this.fronting) socket.destroy();
  }

  private track(socket: net.Socket, remote: string): FramedStream {
    const stream = new FramedStream(
      socket,
      this.options.maxMessageSize,
      remote,
      this.options.protocol,
    );
    this.streams.add(stream);
    stream.whenClosed(() => this.streams.delete(stream));
    return stream;
  }

  /**
   * A connection of its own to `address` that proves `credential` rather than this env's: how a
   * master reaches an application's driver, which lets in nothing but its application's key.
   * No outbox uses it; refs bound to it (RpcEnv.refOver) do.
   */
  dialAs(address: string, credential: Credential): Promise<Session> {
    return this.connect(address, { ...this.options.handshake, credential });
  }

  /** Dials `address` and handshakes; the wick.rpc.connectTimeout covers both. */
  private async connect(
    address: string,
    handshakeOptions: HandshakeOptions = this.options.handshake,
  ): Promise<Session> {
    if (isClientAddress(address)) {
      throw new RpcError(
        RpcErrorCode.ConnectFailed,
        `No connection to client-mode RpcEnv ${address}: it can only be reached over a connection it opened, and it has none open now`,
      );
    }
    const { clock } = this.options;
    const handshake = handshakeOptions;
    const deadline = clock.now() + handshake.timeoutMs;
    const target = RpcAddress.parse(address);
    const { socket, ready } = this.options.security.dial(target.host, target.port);
    if (this.options.unref) socket.unref();
    socket.setNoDelay(true);
    const stream = this.track(socket, target.hostPort);
    try {
      stream.channelBinding = (await connected(ready, stream, handshake.timeoutMs, clock)).binding;
      const left = { ...handshake, timeoutMs: Math.max(1, deadline - clock.now()) };
      return await dialHandshake(stream, left, (peer, principal) =>
        this.open(stream, peer, principal, 'outbound'),
      );
    } catch (err) {
      stream.close(err as Error);
      const e = err as Error & { code?: string };
      const reason = e.code === 'ECONNREFUSED' ? 'connection refused' : e.message;
      const refused =
        err instanceof TlsPinError ||
        (e instanceof RpcError && e.code === RpcErrorCode.AuthenticationFailed);
      throw new RpcError(
        refused ? RpcErrorCode.AuthenticationFailed : RpcErrorCode.ConnectFailed,
        `Failed to connect to wick://${address}: ${reason}`,
        undefined,
        { cause: err },
      );
    }
  }

  /** The handshake named the peer: its session starts, before the next frame is read. */
  private open(
    stream: FramedStream,
    peer: string,
    principal: Principal,
    direction: 'inbound' | 'outbound',
  ): Session {
    const session = new Session(
      stream,
      { peer, principal, direction, clock: this.options.clock },
      this.env,
    );
    stream.whenClosed((err) => this.closed(session, err));
    let open = this.byPeer.get(peer);
    if (!open) {
      open = new Set();
      this.byPeer.set(peer, open);
    }
    open.add(session);
    // An outbound session reaches its outbox when the connect resolves (see newOutbox). An inbound
    // one only when the peer cannot be dialled (a client-mode env): otherwise anyone could announce
    // another env's address in its wick.hello and receive what is sent to that address.
    if (direction === 'inbound' && this.mayCarry(session))
      this.useSession(this.outbox(peer), session);
    log.debug(`Connected to ${peer} (${direction}, ${session.remote})`);
    if (open.size === 1) this.options.events.postToAll({ kind: 'Connected', address: peer });
    return session;
  }

  private closed(session: Session, err: Error | undefined): void {
    const peer = session.peer;
    const open = this.byPeer.get(peer);
    open?.delete(session);
    const outbox = this.outboxes.get(peer);
    if (outbox && outbox.connection === undefined && !outbox.isConnecting) {
      const other = open && [...open].find((s) => s.isUsable && this.mayCarry(s));
      if (other) outbox.attach(other);
      else this.outboxes.delete(peer);
    }
    if (open && open.size > 0) return;
    this.byPeer.delete(peer);
    if (this.env.isStopped) return;
    const events = this.options.events;
    if (err && !(err instanceof RpcError)) {
      events.postToAll({ kind: 'NetworkError', error: err, address: peer });
    }
    log.debug(`Disconnected from ${peer}${err ? `: ${err.message}` : ''}`);
    events.postToAll({ kind: 'Disconnected', address: peer });
  }

  /**
   * The session an outbox writes to: the one we dialled, or, for a client-mode peer (which cannot
   * be dialled), the newest it opened. Two listening envs that dial each other keep both
   * connections, one per direction, as Spark's do: each side sends over the one it dialled.
   */
  private useSession(outbox: Outbox, session: Session): void {
    outbox.attach(session, session.direction === 'inbound');
  }

  /** Whether what is sent to a session's peer address may go over it (see open()). */
  private mayCarry(session: Session): boolean {
    return session.direction === 'outbound' || isClientAddress(session.peer);
  }

  private newOutbox(address: string): Outbox {
    return new Outbox(
      address,
      () => this.connect(address),
      (box, err) => {
        if (this.outboxes.get(address) === box) this.outboxes.delete(address);
        if (!this.env.isStopped) {
          this.options.events.postToAll({ kind: 'NetworkError', error: err, address });
        }
      },
      (box, session) => this.useSession(box, session),
    );
  }
}

/**
 * Resolves once the stream is ready for the handshake (connected, and over TLS its certificate
 * checked); rejects if it fails, closes or takes too long first.
 */
function connected<T>(
  ready: Promise<T>,
  stream: FramedStream,
  timeoutMs: number,
  clock: Clock,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = clock.setTimeout(() => {
      reject(
        new RpcError(
          RpcErrorCode.ConnectFailed,
          `Connecting to ${stream.remote} did not finish within ${timeoutMs} ms (wick.rpc.connectTimeout)`,
        ),
      );
    }, timeoutMs);
    ready.then(
      (value) => {
        timer.cancel();
        resolve(value);
      },
      (err) => {
        timer.cancel();
        reject(err);
      },
    );
    stream.whenClosed(() => {
      timer.cancel();
      reject(new Error('connection closed while connecting'));
    });
  });
}
