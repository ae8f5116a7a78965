import { randomBytes } from 'node:crypto';
import net from 'node:net';
import os from 'node:os';
import type { JSONRPCRequest, JSONRPCResponse } from 'json-rpc-2.0';
import { RpcConf } from '../conf/rpc.js';
import { WickConf } from '../conf/WickConf.js';
import { RpcError, RpcErrorCode } from '../protocol/errors.js';
import { MessageCatalog, type WireMessage } from '../protocol/registry.js';
import * as rpcMessages from '../protocol/rpc.js';
import { CheckExistence } from '../protocol/rpc.js';
import { bindWithRetries } from '../util/bind.js';
import { type Clock, systemClock } from '../util/clock.js';
import { getLogger } from '../util/log.js';
import { type ConnectionStats, Connections, type ConnectionsHost } from './Connections.js';
import { type Credential, clusterKeyRing, type KeyRing } from './credentials.js';
import { Dispatcher } from './Dispatcher.js';
import { InboundRouter } from './InboundRouter.js';
import { BoundOutbox, type Outbox, type OutboxItem } from './Outbox.js';
import { RemoteAsk } from './RemoteAsk.js';
import {
  CLIENT_PREFIX,
  endpointURI,
  isClientAddress,
  parseEndpointURI,
  RpcAddress,
} from './RpcAddress.js';
import type { PeerConnection, RpcCallContext, RpcEndpoint } from './RpcEndpoint.js';
import { type AskOptions, RpcEndpointRef } from './RpcEndpointRef.js';
import { RpcEndpointVerifier } from './RpcEndpointVerifier.js';
import { replyProblem } from './replyProblem.js';
import type { Session } from './Session.js';
import { WireSecurity } from './tls/WireSecurity.js';
import { resolveClientCredential } from './userToken.js';

const log = getLogger('RpcEnv');

export interface RpcEnvOptions {
  /** Names the env in logs and errors, e.g. "wickMaster". */
  name: string;
  /**
   * The messages this env accepts from peers (its own, the endpoint verifier's, are added): the
   * creator's protocol, e.g. `wickProtocol` from backend/protocol/.
   */
  protocol: MessageCatalog;
  /** The address to bind; default 127.0.0.1. */
  host?: string;
  /** The address peers are told to use; default `host` (or this machine's name for 0.0.0.0). */
  advertiseHost?: string;
  /** 0 picks a free port; a busy one is retried upwards (wick.port.maxRetries). */
  port?: number;
  /** A client-mode env binds nothing and is reached only over connections it opens. */
  clientMode?: boolean;
  /**
   * Let the process exit while this env is open (its server and sockets do not keep Node's event
   * loop alive). A driver uses it, so that an application that forgets stop() still ends.
   */
  unref?: boolean;
  conf?: WickConf;
  clock?: Clock;
  /**
   * How this env authenticates (credentials.ts). Default: as a holder of the cluster secret, found
   * the one way every daemon and tool finds it (clusterSecret.ts), or open when none is found.
   * Drivers and executors pass their own key instead.
   */
  auth?: RpcAuth;
  /**
   * TLS on the wires that leave the machine (wick.ssl.*). Default: from the conf, serving
   * wick.ssl.certFile or a certificate made at start when the bind address is not loopback. A
   * master passes the cluster's certificate.
   */
  security?: WireSecurity;
}

/** What an env proves when it dials, and what it accepts when dialled (undefined: open). */
export interface RpcAuth {
  readonly credential: Credential | undefined;
  readonly keys: KeyRing | undefined;
  /** The cluster secret itself, for a holder of it (master, worker, operator's tools). */
  readonly clusterSecret?: string;
}

/** The auth of a holder of the cluster secret, or open without one. */
export function clusterRpcAuth(secret: string | undefined): RpcAuth {
  return secret === undefined
    ? { credential: undefined, keys: undefined }
    : {
        credential: { kind: 'cluster', key: secret },
        keys: clusterKeyRing(secret),
        clusterSecret: secret,
      };
}

/**
 * A one-way message waiting in an outbox. Every send makes one, so it is one object rather than
 * two closures (each of which a keepNames build also names, a call of its own per send).
 */
class Notification implements OutboxItem {
  constructor(
    private readonly params: { to: string; from: string; message: WireMessage },
    private readonly ref: RpcEndpointRef,
  ) {}

  run(conn: Session): void {
    conn.notify(this.params.message.type, this.params);
  }

  fail(err: Error): void {
    log.warn(`Failed to send ${this.params.message.type} to ${this.ref}`, err);
  }
}

/**
 * Wick's RpcEnv (Spark's NettyRpcEnv): one TCP server, many named endpoints, and one connection
 * per peer used in both directions. docs/protocol.md describes what goes over the wire.
 */
export class RpcEnv implements ConnectionsHost {
  readonly name: string;
  private readonly unref: boolean;
  readonly address: string;
  readonly conf: WickConf;
  readonly clock: Clock;
  readonly maxMessageSize: number;
  readonly handshakeTimeoutMs: number;
  readonly auth: RpcAuth;
  /** TLS: what this env serves, and what it pins when it dials. */
  readonly security: WireSecurity;
  /** What peers may send here. */
  readonly protocol: MessageCatalog;
  /** What is wrong with a reply, if anything: one function for every ask, not one per ask. */
  private readonly replyProblem = (result: unknown) => replyProblem(this.protocol, result);
  private readonly askTimeoutMs: number;
  private readonly dispatcher: Dispatcher;
  private readonly router: InboundRouter;
  private readonly connections: Connections;
  /** One outbox per connection that refs are bound to, made on its first send, not on each. */
  private readonly boundOutboxes = new WeakMap<PeerConnection, BoundOutbox>();
  private readonly pendingLocalAsks = new Set<(err: Error) => void>();
  private tcpServer: net.Server | undefined;
  private stopping = false;
  private readonly terminated: Promise<void>;
  private resolveTerminated!: () => void;

  private constructor(
    options: RpcEnvOptions,
    address: string,
    conf: WickConf,
    security: WireSecurity,
  ) {
    this.name = options.name;
    this.unref = options.unref ?? false;
    this.address = address;
    this.conf = conf;
    this.clock = options.clock ?? systemClock;
    this.askTimeoutMs = conf.get(RpcConf.askTimeout);
    this.maxMessageSize = conf.get(RpcConf.maxMessageSize);
    this.handshakeTimeoutMs = conf.get(RpcConf.connectTimeout);
    this.auth = options.auth ?? clusterAuthFromConf(conf);
    this.security = security;
    this.protocol = new MessageCatalog(rpcMessages, options.protocol);
    this.dispatcher = new Dispatcher(() => this.address);
    this.router = new InboundRouter(this.protocol, this.dispatcher);
    this.connections = new Connections(this, {
      handshake: {
        address,
        credential: this.auth.credential,
        keys: this.auth.keys,
        clock: this.clock,
        timeoutMs: this.handshakeTimeoutMs,
      },
      maxMessageSize: this.maxMessageSize,
      protocol: this.protocol,
      unref: this.unref,
      clock: this.clock,
      events: this.dispatcher,
      security,
    });
    this.terminated = new Promise((r) => {
      this.resolveTerminated = r;
    });
  }

  /** Creates an env and, unless in client mode, binds its port. */
  static async create(options: RpcEnvOptions): Promise<RpcEnv> {
    const conf = options.conf ?? new WickConf();
    conf.validate();
    if (options.clientMode) {
      const label = options.name.replace(/[^A-Za-z0-9_.-]/g, '').slice(0, 40) || 'env';
      const env = new RpcEnv(
        options,
        `${CLIENT_PREFIX}${label}-${randomBytes(6).toString('hex')}`,
        conf,
        options.security ?? (await WireSecurity.fromConf(conf)),
      );
      env.setupEndpoint(RpcEndpointVerifier.NAME, new RpcEndpointVerifier());
      return env;
    }
    const host = options.host ?? '127.0.0.1';
    const advertiseHost =
      options.advertiseHost ?? (host === '0.0.0.0' || host === '::' ? os.hostname() : host);
    const security =
      options.security ??
      (await WireSecurity.fromConf(conf, {
        bindHost: host,
        name: options.name,
        advertise: [advertiseHost],
      }));
    const server = net.createServer();
    const port = await bindWithRetries(
      server,
      options.name,
      host,
      options.port ?? 0,
      conf.get(RpcConf.portMaxRetries),
    );
    let env: RpcEnv;
    try {
      env = new RpcEnv(options, new RpcAddress(advertiseHost, port).hostPort, conf, security);
    } catch (err) {
      // E.g. wick.authenticate without a secret: do not leave the port bound.
      server.close();
      throw err;
    }
    env.tcpServer = server;
    if (env.unref) server.unref();
    server.on('connection', (socket) => env.connections.accept(socket));
    server.on('error', (err) => log.error(`Server of ${env.name} failed`, err));
    env.setupEndpoint(RpcEndpointVerifier.NAME, new RpcEndpointVerifier());
    log.info(
      `Successfully started service '${options.name}' on ${env.address}${security.serves ? ` (TLS 1.3, certificate ${security.fingerprint}, ${security.identity?.source})` : ''}`,
    );
    return env;
  }

  /** The cluster secret, when this env holds it; undefined for an app's process or when open. */
  get clusterSecret(): string | undefined {
    return this.auth.clusterSecret;
  }

  /** Whether this env authenticates its peers (not open). */
  get authenticates(): boolean {
    return this.auth.keys !== undefined || this.auth.credential !== undefined;
  }

  /** A connection to `address` proving `credential` instead of this env's (Connections.dialAs). */
  connectAs(address: string, credential: Credential): Promise<PeerConnection> {
    return this.connections.dialAs(address, credential);
  }

  /**
   * A ref to the endpoint `name` of the peer at the other end of `connection`, which sends over
   * that connection alone (RpcEndpointRef.via).
   */
  refOver(connection: PeerConnection, name: string): RpcEndpointRef {
    return new RpcEndpointRef(connection.peer, name, this, connection);
  }

  get isClientMode(): boolean {
    return isClientAddress(this.address);
  }

  /** The bound address; undefined for a client-mode env. */
  get rpcAddress(): RpcAddress | undefined {
    return this.isClientMode ? undefined : RpcAddress.parse(this.address);
  }

  get isStopped(): boolean {
    return this.stopping;
  }

  setupEndpoint(name: string, endpoint: RpcEndpoint): RpcEndpointRef {
    if (this.stopping) throw new RpcError(RpcErrorCode.RpcEnvStopped, 'RpcEnv stopped');
    const ref = new RpcEndpointRef(this.address, name, this);
    endpoint.rpcEnv = this;
    endpoint.self = ref;
    this.dispatcher.register(name, endpoint);
    return ref;
  }

  hasEndpoint(name: string): boolean {
    return this.dispatcher.has(name);
  }

  /**
   * Bytes queued for `address` but not yet sent, and a promise for when they are: lets a producer
   * (a log follower) keep pace with a slow peer instead of buffering without bound.
   */
  backlog(to: string | RpcEndpointRef): { bytes: number; drained: () => Promise<void> } {
    const conn = typeof to === 'string' ? this.connections.sessionTo(to) : this.sessionOf(to);
    if (!conn) return { bytes: 0, drained: () => Promise.resolve() };
    return { bytes: conn.writableLength, drained: () => conn.drained() };
  }

  /**
   * Closes the connection to `to` (an address, or the connection a ref is bound to) now, dropping
   * what is queued for it: for a peer that stopped reading while its queue grew. Its endpoints
   * hear of it as of a hang-up (onDisconnected). False if there was none.
   */
  disconnect(to: string | RpcEndpointRef, reason: string): boolean {
    const conn = typeof to === 'string' ? this.connections.sessionTo(to) : this.sessionOf(to);
    if (!conn) return false;
    conn.close(new RpcError(RpcErrorCode.ConnectionClosed, reason));
    return true;
  }

  /** What is open now: sockets, sessions by direction, peers (for metrics; O(sessions)). */
  connectionStats(): ConnectionStats {
    return this.connections.stats();
  }

  /** Stops one endpoint of this env; resolves once its onStop has run. */
  stopEndpoint(ref: RpcEndpointRef): Promise<void> {
    if (ref.address !== this.address)
      throw new Error(`${ref} is not an endpoint of ${this.address}`);
    return this.dispatcher.unregister(ref.name);
  }

  /** A ref from data carried in a message, without checking that the endpoint exists. */
  endpointRef(data: { address: string; name: string }): RpcEndpointRef {
    return new RpcEndpointRef(data.address, data.name, this);
  }

  /**
   * A ref to a remote endpoint, after checking that it exists (Spark's RpcEndpointVerifier).
   * `options.timeout` bounds the check, connecting included (a probe of whether a peer can be
   * reached at all); default wick.rpc.askTimeout.
   */
  async setupEndpointRef(
    address: RpcAddress | string,
    name: string,
    options?: AskOptions,
  ): Promise<RpcEndpointRef> {
    const addr = typeof address === 'string' ? address : address.hostPort;
    const verifier = new RpcEndpointRef(addr, RpcEndpointVerifier.NAME, this);
    const reply = await verifier.ask(CheckExistence({ name }), options);
    if (reply.type !== 'CheckExistenceResponse' || reply.exists !== true) {
      throw new RpcError(
        RpcErrorCode.EndpointNotFound,
        `Cannot find endpoint: ${endpointURI(addr, name)}`,
      );
    }
    return new RpcEndpointRef(addr, name, this);
  }

  /** The same, from `wick://host:port/Name`. */
  setupEndpointRefByURI(uri: string): Promise<RpcEndpointRef> {
    const { address, name } = parseEndpointURI(uri);
    return this.setupEndpointRef(address, name);
  }

  send(ref: RpcEndpointRef, message: WireMessage): void {
    if (this.stopping) throw new RpcError(RpcErrorCode.RpcEnvStopped, 'RpcEnv stopped');
    if (ref.address === this.address && !ref.via) {
      this.dispatcher.postOneWay(ref.name, message, { senderAddress: this.address });
      return;
    }
    this.outboxOf(ref).send(new Notification({ to: ref.name, from: this.address, message }, ref));
  }

  flush(ref: RpcEndpointRef): void {
    this.sessionOf(ref)?.flushWrites();
  }

  /** Where a ref's messages go: its connection's, or its address's outbox. */
  private outboxOf(ref: RpcEndpointRef): Pick<Outbox, 'send' | 'connection'> {
    if (!ref.via) return this.connections.outbox(ref.address);
    let bound = this.boundOutboxes.get(ref.via);
    if (!bound) {
      bound = new BoundOutbox(ref.via as Session);
      this.boundOutboxes.set(ref.via, bound);
    }
    return bound;
  }

  private sessionOf(ref: RpcEndpointRef): Session | undefined {
    if (ref.via) return ref.via.isOpen ? (ref.via as Session) : undefined;
    return this.connections.sessionTo(ref.address);
  }

  /**
   * Sends `message` with `bytes` as its base64 field `field`: the same message on the wire as
   * `send` with `bytes.toString('base64')` there, for megabytes (a LogChunk) without JSON.stringify
   * scanning them (see splicedFrames.ts). `bytes` are encoded before this returns: the caller may
   * reuse their memory at once.
   */
  sendWithBytes(ref: RpcEndpointRef, message: WireMessage, field: string, bytes: Buffer): void {
    if (this.stopping) throw new RpcError(RpcErrorCode.RpcEnvStopped, 'RpcEnv stopped');
    const base64 = bytes.toString('base64');
    if (ref.address === this.address && !ref.via) {
      const local = { ...message, [field]: base64 };
      this.dispatcher.postOneWay(ref.name, local, { senderAddress: this.address });
      return;
    }
    const params = { to: ref.name, from: this.address, message };
    this.outboxOf(ref).send({
      run: (conn) => conn.notifyWithBase64(message.type, params, field, base64),
      fail: (err) => log.warn(`Failed to send ${message.type} to ${ref}`, err),
    });
  }

  ask(
    ref: RpcEndpointRef,
    message: WireMessage,
    timeoutMs = this.askTimeoutMs,
  ): Promise<WireMessage> {
    if (this.stopping) {
      return Promise.reject(new RpcError(RpcErrorCode.RpcEnvStopped, 'RpcEnv stopped'));
    }
    const timeoutMessage = `Ask ${message.type} to ${ref} timed out after ${timeoutMs} ms; this timeout is set by wick.rpc.askTimeout`;
    if (ref.address === this.address && !ref.via) {
      return this.askLocal(ref, message, timeoutMs, timeoutMessage);
    }
    return new Promise<WireMessage>((resolve, reject) => {
      const params = { to: ref.name, from: this.address, message };
      const ask = new RemoteAsk(
        this.clock,
        ref,
        this.replyProblem,
        params,
        this.clock.now() + timeoutMs,
        timeoutMessage,
        resolve,
        reject,
      );
      const outbox = this.outboxOf(ref);
      if (!outbox.connection && !ref.via) {
        ask.queued = this.clock.setTimeout(
          () => ask.fail(new RpcError(RpcErrorCode.AskTimeout, timeoutMessage)),
          timeoutMs,
        );
      }
      outbox.send(ask);
    });
  }

  /** Stops every endpoint (onStop), fails pending asks, closes every connection. */
  async stop(): Promise<void> {
    if (this.stopping) return this.terminated;
    this.stopping = true;
    const serverClosed = new Promise<void>((r) => {
      if (!this.tcpServer) return r();
      this.tcpServer.close(() => r());
    });
    const stopped = new RpcError(RpcErrorCode.RpcEnvStopped, 'RpcEnv stopped');
    // Asks to remote endpoints fail first: a handler awaiting one would otherwise keep its
    // endpoint from reaching onStop until the ask timed out. Connections stay open meanwhile, so
    // asks from peers still queued in an inbox get their replies.
    this.connections.failPending(stopped);
    await this.dispatcher.stop();
    for (const fail of this.pendingLocalAsks) fail(stopped);
    this.pendingLocalAsks.clear();
    this.connections.closeAll(stopped);
    await serverClosed;
    this.resolveTerminated();
  }

  /** Resolves once stop() has finished. */
  awaitTermination(): Promise<void> {
    return this.terminated;
  }

  private askLocal(
    ref: RpcEndpointRef,
    message: WireMessage,
    timeoutMs: number,
    timeoutMessage: string,
  ): Promise<WireMessage> {
    return new Promise<WireMessage>((resolve, reject) => {
      let done = false;
      const settle = (fn: () => void) => {
        if (done) return;
        done = true;
        timer.cancel();
        this.pendingLocalAsks.delete(fail);
        fn();
      };
      const fail = (err: Error) => settle(() => reject(err));
      const timer = this.clock.setTimeout(
        () => fail(new RpcError(RpcErrorCode.AskTimeout, timeoutMessage)),
        timeoutMs,
      );
      this.pendingLocalAsks.add(fail);
      const ctx: RpcCallContext = {
        senderAddress: this.address,
        reply: (response) => settle(() => resolve(response)),
        sendFailure: (err) => fail(RpcError.from(err)),
      };
      this.dispatcher.postRpc(ref.name, message, ctx);
    });
  }

  /** Serves one request or notification from a peer (SessionHost): the router's job. */
  handleRequest(
    req: JSONRPCRequest,
    conn: Session,
  ): JSONRPCResponse | null | Promise<JSONRPCResponse | null> {
    return this.router.handle(req, conn);
  }
}

/**
 * The auth of a daemon or tool that was given none: the cluster secret, found the one way
 * (clusterSecret.ts), a user's token (userToken.ts), or open. A master makes its secret before it gets here (startMaster).
 */
function clusterAuthFromConf(conf: WickConf): RpcAuth {
  const found = resolveClientCredential(conf);
  if (found.credential?.kind === 'token') {
    // A user's token: it dials the master, and lets nobody in (it opens no port of its own).
    return { credential: found.credential, keys: { keyFor: () => undefined } };
  }
  return clusterRpcAuth(found.secret);
}
