import type net from 'node:net';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import {
  createJSONRPCErrorResponse,
  type JSONRPCID,
  type JSONRPCRequest,
  type JSONRPCResponse,
} from 'json-rpc-2.0';
import { RpcError, RpcErrorCode } from '../protocol/errors.js';
import { type MessageCatalog, previewJSON } from '../protocol/registry.js';
import { AuthParams, HelloParams, HelloResult } from '../protocol/rpc.js';
import type { Clock, TimerHandle } from '../util/clock.js';
import { getLogger } from '../util/log.js';
import { clientProof, newNonce, proofsEqual, serverProof } from './auth.js';
import { FrameBuffers } from './FrameBuffers.js';
import { classifyFrame } from './frames.js';
import { LineDecoder } from './LineDecoder.js';
import type { RpcSenderContext } from './RpcEndpoint.js';
import { splicedNotification } from './splicedFrames.js';

const log = getLogger('Connection');

/**
 * The notification a side sends on a duplicate connection it no longer uses (JSON-RPC reserves
 * names starting with "rpc." for such internal methods; it reaches no endpoint).
 */
export const RETIRE_METHOD = 'rpc.retire';
const checkHelloParams = TypeCompiler.Compile(HelloParams);
const checkHelloResult = TypeCompiler.Compile(HelloResult);
const checkAuthParams = TypeCompiler.Compile(AuthParams);

/** What a connection needs from its RpcEnv. */
export interface ConnectionHost {
  /** This env's identity, sent in the handshake. */
  readonly address: string;
  readonly maxMessageSize: number;
  /** The messages peers may send: which of their fields are base64. */
  readonly protocol: MessageCatalog;
  /** The shared secret when wick.authenticate is on. */
  readonly secret: string | undefined;
  readonly clock: Clock;
  readonly handshakeTimeoutMs: number;
  /**
   * Serves a request or notification from the peer: its response, null when there is none to
   * send (a notification), or a promise of either (an ask its endpoint answers later).
   */
  handleRequest(
    request: JSONRPCRequest,
    conn: Connection,
  ): JSONRPCResponse | null | Promise<JSONRPCResponse | null>;
  onConnectionOpen(conn: Connection): void;
  onConnectionClosed(conn: Connection, err: Error | undefined): void;
}

type State = 'handshaking' | 'authenticating' | 'open' | 'closed';

/** Past this much unsent output, error replies to a misbehaving peer are dropped, not queued. */
const ERROR_REPLY_BACKLOG = 16 * 1024 * 1024;
const BAD_FRAME_LOG_LIMIT = 10;
/** The id at the head of a frame as Wick writes it: {"jsonrpc":"2.0","id":…,"method"… */
const OVERSIZE_ID =
  /^\s*\{\s*"jsonrpc"\s*:\s*"2\.0"\s*,\s*"id"\s*:\s*(\d{1,15}|"[^"\\]{0,200}")\s*,\s*"(method|result|error)"/;
/** Requests held while an outbound handshake finishes; past this they are refused as before. */
const HELD_REQUESTS_LIMIT = 1024;

/**
 * One TCP connection between two RpcEnvs, used in both directions: JSON-RPC 2.0, one message per
 * line. It starts with the handshake (`wick.hello`, then `wick.auth` when authenticating) and
 * accepts nothing else until that is done. It never throws at its peer's input: whatever arrives
 * gets a JSON-RPC error or a log line, and the connection carries on.
 */
export class Connection {
  /** The peer's env identity, known once the handshake is done. */
  peer: string | undefined;
  /** The sender of what arrives here, once the peer is known: one object, not one per message. */
  sender: RpcSenderContext = { senderAddress: '' };
  private state: State = 'handshaking';
  /** Our requests waiting for their response, by id (what json-rpc-2.0's client kept). */
  private readonly waiting = new Map<JSONRPCID, (response: JSONRPCResponse) => void>();
  private readonly decoder: LineDecoder;
  private readonly inflight = new Set<JSONRPCID>();
  /** Requests from the peer not answered yet. */
  private serving = 0;
  private retiring = false;
  /** We told the peer we send nothing more here (RETIRE_METHOD). */
  private sentRetire = false;
  /** The peer told us it sends nothing more here. */
  private peerRetired = false;
  private nextId = 1;
  private handshakeTimer: TimerHandle | undefined;
  private clientNonce: string | undefined;
  private challenge: string | undefined;
  private claimedPeer: string | undefined;
  /** While set, the id of our handshake reply not yet written: what else we write waits. */
  private handshakeReplyId: JSONRPCID | undefined;
  private writesAfterReply: string[] = [];
  /** Requests that came before our outbound handshake finished, served once it has. */
  private held: Record<string, unknown>[] = [];
  private badFrames = 0;
  /** True while writes of this tick are held for one writev (see writeCoalesced). */
  private corked = false;
  private closeError: Error | undefined;
  /** Buffers for spliced frames, made on the first one (see notifyWithBase64). */
  private frameBuffers: FrameBuffers | undefined;
  /** Where the socket goes, for logs: the peer's socket address. */
  readonly remote: string;

  constructor(
    private readonly host: ConnectionHost,
    readonly socket: net.Socket,
    readonly direction: 'inbound' | 'outbound',
  ) {
    this.remote = `${socket.remoteAddress ?? '?'}:${socket.remotePort ?? '?'}`;
    socket.setNoDelay(true);
    this.decoder = new LineDecoder(
      host.maxMessageSize,
      (frame) => this.onFrame(frame),
      (bytes, head) => this.onOversize(bytes, head),
    );
    socket.on('data', (chunk: Buffer) => this.decoder.push(chunk));
    socket.on('error', (err) => {
      this.closeError ??= err;
    });
    socket.on('close', () => this.onSocketClosed());
    this.handshakeTimer = host.clock.setTimeout(() => {
      this.close(new RpcError(RpcErrorCode.ConnectFailed, this.handshakeTimeoutMessage()));
    }, host.handshakeTimeoutMs);
  }

  private handshakeTimeoutMessage(): string {
    return `Handshake with ${this.remote} did not finish within ${this.host.handshakeTimeoutMs} ms (wick.rpc.connectTimeout)`;
  }

  /** Bytes written but not yet handed to the OS: how far behind the peer is. */
  get writableLength(): number {
    return this.socket.writableLength;
  }

  /** Resolves once the socket's buffer has drained (or the connection closed). */
  drained(): Promise<void> {
    if (this.state === 'closed' || !this.socket.writableNeedDrain) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.socket.off('drain', done);
        this.socket.off('close', done);
        resolve();
      };
      this.socket.once('drain', done);
      this.socket.once('close', done);
    });
  }

  get isOpen(): boolean {
    return this.state === 'open';
  }

  /** Open, and neither side has given it up as a duplicate: what an outbox may send on. */
  get isUsable(): boolean {
    return this.state === 'open' && !this.retiring && !this.sentRetire;
  }

  get isClosed(): boolean {
    return this.state === 'closed';
  }

  /** The outbound side of the handshake; resolves once the connection is open. */
  async handshake(): Promise<void> {
    const secret = this.host.secret;
    this.clientNonce = secret === undefined ? undefined : newNonce();
    const params: Record<string, unknown> = { version: 1, from: this.host.address };
    if (this.clientNonce) params.nonce = this.clientNonce;
    const res = await this.request(
      'wick.hello',
      params,
      this.host.handshakeTimeoutMs,
      this.handshakeTimeoutMessage(),
    );
    if (!checkHelloResult.Check(res)) {
      throw new RpcError(
        RpcErrorCode.InvalidRequest,
        `Peer ${this.remote} answered wick.hello with ${previewJSON(res, 200)}, which is not a valid HelloResult`,
      );
    }
    if (secret !== undefined && this.clientNonce) {
      if (!res.challenge || !res.proof) {
        throw this.authFailure(
          `Peer ${res.from} does not authenticate, but wick.authenticate is on here; turn it on there too`,
        );
      }
      if (!proofsEqual(res.proof, serverProof(secret, this.clientNonce, res.challenge))) {
        throw this.authFailure(
          `Peer ${res.from} failed authentication: its proof does not match our secret; check that both sides use the same wick.authenticate.secret`,
        );
      }
      await this.request(
        'wick.auth',
        { proof: clientProof(secret, this.clientNonce, res.challenge) },
        this.host.handshakeTimeoutMs,
        this.handshakeTimeoutMessage(),
      );
    } else if (res.challenge) {
      throw this.authFailure(
        `Peer ${res.from} requires authentication: set wick.authenticate=true and the shared secret (wick.authenticate.secret or WICK_AUTH_SECRET)`,
      );
    }
    this.open(res.from);
  }

  /** Server side of `wick.hello`. */
  handleHello(request: JSONRPCRequest): JSONRPCResponse | null {
    const id = request.id ?? null;
    if (this.state !== 'handshaking') {
      return errorResponse(
        id,
        RpcErrorCode.InvalidRequest,
        'wick.hello was already received on this connection',
      );
    }
    if (!checkHelloParams.Check(request.params)) {
      const first = checkHelloParams.Errors(request.params).First();
      return errorResponse(
        id,
        RpcErrorCode.InvalidParams,
        `Invalid wick.hello params: ${first ? `${first.path || '/'} ${first.message}` : 'not a HelloParams object'}`,
      );
    }
    const params = request.params;
    const secret = this.host.secret;
    if (secret === undefined) {
      if (params.nonce) {
        return this.refuse(
          id,
          `Refused ${params.from} (${this.remote}): it asked to authenticate, but wick.authenticate is off here`,
          'This RpcEnv does not have wick.authenticate on; turn it on here or off at the peer',
        );
      }
      this.open(params.from, id);
      return success(id, { version: 1, from: this.host.address });
    }
    if (!params.nonce) {
      return this.refuse(
        id,
        `Refused ${params.from} (${this.remote}): it did not authenticate, and wick.authenticate is on here`,
        'Authentication required: set wick.authenticate=true and the shared secret (wick.authenticate.secret or WICK_AUTH_SECRET)',
      );
    }
    this.claimedPeer = params.from;
    this.clientNonce = params.nonce;
    this.challenge = newNonce();
    this.state = 'authenticating';
    return success(id, {
      version: 1,
      from: this.host.address,
      challenge: this.challenge,
      proof: serverProof(secret, params.nonce, this.challenge),
    });
  }

  /** Server side of `wick.auth`. */
  handleAuth(request: JSONRPCRequest): JSONRPCResponse | null {
    const id = request.id ?? null;
    const secret = this.host.secret;
    if (
      this.state !== 'authenticating' ||
      secret === undefined ||
      !this.clientNonce ||
      !this.challenge
    ) {
      return errorResponse(
        id,
        RpcErrorCode.InvalidRequest,
        'wick.auth is only accepted right after wick.hello with a nonce',
      );
    }
    if (
      !checkAuthParams.Check(request.params) ||
      !proofsEqual(request.params.proof, clientProof(secret, this.clientNonce, this.challenge))
    ) {
      return this.refuse(
        id,
        `Refused ${this.claimedPeer} (${this.remote}): authentication failed, its proof does not match our secret`,
        'Authentication failed: check that both sides use the same wick.authenticate.secret',
      );
    }
    this.open(this.claimedPeer as string, id);
    return success(id, { ok: true });
  }

  /** Sends a request and resolves to its result; rejects with an RpcError. */
  request(
    method: string,
    params: object,
    timeoutMs: number,
    timeoutMessage: string,
  ): Promise<unknown> {
    if (this.state === 'closed') {
      return Promise.reject(this.closedError());
    }
    const id = this.nextId++;
    this.inflight.add(id);
    const timer = this.host.clock.setTimeout(() => {
      this.receiveReply(errorResponse(id, RpcErrorCode.AskTimeout, timeoutMessage));
    }, timeoutMs);
    // json-rpc-2.0's JSONRPCClient.requestAdvanced did the same with three more promises and an
    // async generator per request; this is every ask's path, so it is done by hand.
    const reply = new Promise<JSONRPCResponse>((resolve) => this.waiting.set(id, resolve));
    try {
      this.write({ jsonrpc: '2.0', id, method, params });
    } catch (err) {
      // As that client did: a request that cannot be written fails with code 0 and the reason.
      this.receiveReply(
        errorResponse(id, 0, (err as Error | undefined)?.message || 'Failed to send a request'),
      );
    }
    return reply.then((res) => {
      timer.cancel();
      this.inflight.delete(id);
      this.closeIfRetired();
      if (res.error) {
        const e = res.error;
        throw new RpcError(
          typeof e.code === 'number' ? e.code : RpcErrorCode.InternalError,
          typeof e.message === 'string' ? e.message : JSON.stringify(e),
          e.data,
        );
      }
      return res.result;
    });
  }

  /**
   * Closes this connection, a duplicate we dialled to a peer that also dialled us at the same
   * moment (RpcEnv keeps the other), once the peer has said it sends nothing more on it
   * (stopSending on its side) and nothing is in flight on it either way. Closing sooner could
   * lose what the peer wrote meanwhile: a request or notification crossing our close.
   */
  retire(): void {
    this.retiring = true;
    this.stopSending();
    this.closeIfRetired();
  }

  /**
   * Tells the peer that we send nothing more on this connection (a duplicate; our outbox uses the
   * other one), so that the peer, which dialled it, may close it.
   */
  stopSending(): void {
    if (this.sentRetire || this.state !== 'open') return;
    this.sentRetire = true;
    try {
      this.write({ jsonrpc: '2.0', method: RETIRE_METHOD, params: {} });
    } catch {
      // Closed meanwhile: nothing to close.
    }
  }

  private closeIfRetired(): void {
    if (
      this.retiring &&
      this.peerRetired &&
      this.inflight.size === 0 &&
      this.serving === 0 &&
      this.state === 'open'
    ) {
      this.socket.end();
    }
  }

  /** Sends a notification; throws if it is too large or the connection is closed. */
  notify(method: string, params: object): void {
    if (this.state === 'closed') throw this.closedError();
    this.write({ jsonrpc: '2.0', method, params });
  }

  /**
   * Sends a notification whose params.message gets `field` = `base64` spliced in as bytes rather
   * than through JSON.stringify (splicedFrames.ts): for megabytes of log data.
   */
  notifyWithBase64(
    method: string,
    params: { message: object },
    field: string,
    base64: string,
  ): void {
    if (this.state === 'closed') throw this.closedError();
    if (this.handshakeReplyId !== undefined) {
      // Rare (a follow set up before our handshake reply left): the ordinary path queues it.
      this.notify(method, { ...params, message: { ...params.message, [field]: base64 } });
      return;
    }
    this.frameBuffers ??= new FrameBuffers();
    const pool = this.frameBuffers;
    let buf: Buffer | undefined;
    const frame = splicedNotification(method, params, field, base64, (size) => {
      buf = pool.take(size);
      return buf;
    });
    const max = this.host.maxMessageSize;
    if (frame.length - 1 > max) {
      pool.give(buf as Buffer);
      throw new RpcError(
        RpcErrorCode.FrameTooLarge,
        `${method} of ${frame.length - 1} bytes exceeds wick.rpc.message.maxSize (${max} bytes)`,
      );
    }
    // The socket calls back once it has written the frame (or failed to): then it is free.
    this.writeCoalesced(frame, () => pool.give(buf as Buffer));
  }

  /**
   * Closes now. `graceful` lets what was written drain to the peer first (a FIN after the data,
   * then a hard close if the peer does not finish within a second): RpcEnv.stop() uses it so that
   * its last messages (an UnregisterApplication, say) are not lost.
   */
  close(err?: Error, graceful = false): void {
    if (this.state === 'closed') return;
    this.closeError ??= err;
    // What was written this tick goes out before the socket is destroyed, as unbuffered writes did.
    this.flushWrites();
    if (graceful) {
      this.socket.end();
      setTimeout(() => this.socket.destroy(), 1000).unref();
    } else {
      this.socket.destroy();
    }
    this.onSocketClosed();
  }

  /**
   * Fails the asks still waiting on a reply here, and leaves the connection open: RpcEnv.stop()
   * does this before waiting for the endpoints' onStop, so that a handler awaiting a remote ask
   * ends instead of holding the stop until that ask times out.
   */
  failPending(err: RpcError): void {
    for (const id of this.inflight) {
      this.receiveReply(errorResponse(id, err.code, err.message));
    }
    this.inflight.clear();
  }

  /**
   * Opens the connection. On the accepting side (`replyId` given) the handshake reply must be the
   * first thing the peer reads: what the host writes at once (queued asks, onConnected handlers)
   * would otherwise overtake it, and the peer, still handshaking, would refuse it with
   * HandshakeRequired. So those writes wait in `writesAfterReply` until the reply is out.
   */
  private open(peer: string, replyId?: JSONRPCID): void {
    this.peer = peer;
    this.sender = { senderAddress: peer };
    this.state = 'open';
    this.handshakeTimer?.cancel();
    this.handshakeTimer = undefined;
    this.handshakeReplyId = replyId;
    this.host.onConnectionOpen(this);
    const held = this.held;
    this.held = [];
    for (const msg of held) this.serve(msg);
  }

  private refuse(id: JSONRPCID, logLine: string, reply: string): JSONRPCResponse | null {
    log.warn(logLine);
    // Let the error reply go out first, then hang up.
    setImmediate(() => this.socket.end());
    setTimeout(() => this.close(), 1000).unref();
    return errorResponse(id, RpcErrorCode.AuthenticationFailed, reply);
  }

  private authFailure(message: string): RpcError {
    log.warn(message);
    return new RpcError(RpcErrorCode.AuthenticationFailed, message);
  }

  private closedError(): RpcError {
    if (
      this.closeError instanceof RpcError &&
      this.closeError.code === RpcErrorCode.RpcEnvStopped
    ) {
      return this.closeError;
    }
    const peer = this.peer ?? this.remote;
    const why = this.closeError ? `: ${this.closeError.message}` : '';
    return new RpcError(
      RpcErrorCode.ConnectionClosed,
      `Connection to ${peer} closed${why}`,
      undefined,
      {
        cause: this.closeError,
      },
    );
  }

  private onSocketClosed(): void {
    if (this.state === 'closed') return;
    if (this.state === 'authenticating') {
      // A client that rejects our proof hangs up without wick.auth; say why on this side too.
      log.warn(
        `Refused ${this.claimedPeer} (${this.remote}): it hung up during authentication; its wick.authenticate.secret probably differs from ours`,
      );
    }
    this.state = 'closed';
    this.held = [];
    this.writesAfterReply = [];
    this.handshakeTimer?.cancel();
    // Asks still waiting on this connection fail now rather than at their timeout.
    const closed = this.closedError();
    for (const id of this.inflight) {
      this.receiveReply(errorResponse(id, closed.code, closed.message));
    }
    this.inflight.clear();
    if (this.badFrames > BAD_FRAME_LOG_LIMIT) {
      log.warn(`${this.badFrames} bad frames in all from ${this.peer ?? this.remote}`);
    }
    this.host.onConnectionClosed(this, this.closeError);
  }

  /** Settles our request with this response's id, if one is waiting (else drops it). */
  private receiveReply(response: JSONRPCResponse): void {
    const id = response.id as JSONRPCID;
    const resolve = this.waiting.get(id);
    if (resolve) {
      this.waiting.delete(id);
      resolve(response);
    }
  }

  /** Serialises and writes one message; refuses one larger than wick.rpc.message.maxSize. */
  private write(payload: unknown): void {
    if (this.state === 'closed') throw this.closedError();
    const text = JSON.stringify(payload);
    const max = this.host.maxMessageSize;
    // A UTF-8 byte is at most 3 per UTF-16 unit; only measure bytes when it could be too big.
    if (text.length * 3 > max) {
      const bytes = Buffer.byteLength(text);
      if (bytes > max) {
        const res = payload as Partial<JSONRPCResponse> & { method?: string };
        const what = res.method ?? (res.result?.type ? `Reply ${res.result.type}` : 'Message');
        const err = new RpcError(
          RpcErrorCode.FrameTooLarge,
          `${what} of ${bytes} bytes exceeds wick.rpc.message.maxSize (${max} bytes)`,
        );
        if (res.id !== undefined && res.id !== null && res.method !== undefined) {
          // Our own ask: fail it here with the size error rather than send it.
          this.receiveReply(errorResponse(res.id, err.code, err.message));
          return;
        }
        if (res.id !== undefined && res.method === undefined) {
          // A reply that is too large: the asker gets the error instead of waiting in vain.
          this.socket.write(`${JSON.stringify(errorResponse(res.id, err.code, err.message))}\n`);
          log.warn(err.message);
          return;
        }
        throw err;
      }
    }
    if (this.handshakeReplyId !== undefined) {
      const p = payload as { id?: unknown; method?: unknown };
      if (p.method !== undefined || p.id !== this.handshakeReplyId) {
        this.writesAfterReply.push(text);
        return;
      }
      this.handshakeReplyId = undefined;
      const after = this.writesAfterReply;
      this.writesAfterReply = [];
      this.writeCoalesced(`${[text, ...after].join('\n')}\n`);
      return;
    }
    this.writeCoalesced(`${text}\n`);
  }

  /**
   * Writes through a socket corked until the end of this tick, so that the replies and asks made
   * in one turn of the event loop (64 asks in flight answer in a handful of chunks) leave in one
   * writev instead of one syscall each. Bytes and their order are unchanged; every other write
   * goes through the same socket, so it queues behind these in order.
   */
  private writeCoalesced(data: string | Buffer, written?: () => void): void {
    if (!this.corked) {
      this.corked = true;
      this.socket.cork();
      process.nextTick(uncork, this);
    }
    this.socket.write(data, written);
  }

  /** Sends what is corked now. */
  flushWrites(): void {
    if (!this.corked) return;
    this.corked = false;
    this.socket.uncork();
  }

  private onFrame(text: string): void {
    const frame = classifyFrame(text, this.peer ?? this.remote, this.host.protocol);
    switch (frame.kind) {
      case 'bad':
        this.badFrame(frame.id, frame.code, frame.message);
        return;
      case 'response':
        this.receiveReply(frame.response);
        return;
      case 'request':
        if (
          this.direction === 'outbound' &&
          this.state !== 'open' &&
          this.held.length < HELD_REQUESTS_LIMIT
        ) {
          // The peer may write right after its handshake reply, in the same chunk; we only open
          // once that reply's promise has settled, so hold its requests until then.
          this.held.push(frame.request as unknown as Record<string, unknown>);
          return;
        }
        this.serve(frame.request as unknown as Record<string, unknown>);
        return;
    }
  }

  private serve(msg: Record<string, unknown>): void {
    if (msg.method === RETIRE_METHOD && msg.id === undefined) {
      this.peerRetired = true;
      this.closeIfRetired();
      return;
    }
    const request = msg as unknown as JSONRPCRequest;
    let response: JSONRPCResponse | null | Promise<JSONRPCResponse | null>;
    try {
      response = this.host.handleRequest(request, this);
    } catch (err) {
      response = this.handlerFailed(request, err);
    }
    // Notifications (heartbeats, most of the traffic) and replies known at once end here, without
    // a promise: only an ask that its endpoint answers later waits on one.
    if (!(response instanceof Promise)) {
      this.answer(request, response);
      return;
    }
    this.serving++;
    response
      .then(
        (res) => this.answer(request, res),
        (err: unknown) => this.answer(request, this.handlerFailed(request, err)),
      )
      .finally(() => {
        this.serving--;
        this.closeIfRetired();
      });
  }

  private answer(request: JSONRPCRequest, response: JSONRPCResponse | null): void {
    if (response === null && request.id !== undefined) {
      // A request always gets an answer, as it did from json-rpc-2.0's server.
      response = errorResponse(request.id, RpcErrorCode.InternalError, 'Internal error');
    }
    if (response === null) return;
    try {
      this.write(response);
    } catch (err) {
      log.warn(`Could not answer ${request.method} from ${this.peer ?? this.remote}`, err);
    }
  }

  private handlerFailed(request: JSONRPCRequest, err: unknown): JSONRPCResponse | null {
    log.warn(`Serving ${request.method} from ${this.peer ?? this.remote} failed`, err);
    if (request.id === undefined) return null;
    const e = RpcError.from(err);
    return errorResponse(request.id, RpcErrorCode.InternalError, e.message);
  }

  /**
   * A frame over wick.rpc.message.maxSize, dropped unread but for its first bytes. Wick writes
   * "jsonrpc" and "id" first, so the id is usually there: a request then gets its error under its
   * own id, and a reply to one of our asks fails that ask, instead of either side waiting in vain.
   */
  private onOversize(bytes: number, head: string): void {
    const message = `Frame of ${bytes} bytes exceeds wick.rpc.message.maxSize (${this.host.maxMessageSize} bytes)`;
    const m = OVERSIZE_ID.exec(head);
    const id = m ? (JSON.parse(m[1] as string) as JSONRPCID) : null;
    if (id !== null && m?.[2] !== 'method') {
      this.badFrames++;
      log.warn(`Bad frame from ${this.peer ?? this.remote}: reply ${message}`);
      if (this.inflight.has(id)) {
        this.receiveReply(
          errorResponse(
            id,
            RpcErrorCode.FrameTooLarge,
            `Reply of ${bytes} bytes exceeds wick.rpc.message.maxSize (${this.host.maxMessageSize} bytes) here`,
          ),
        );
      }
      return;
    }
    this.badFrame(id, RpcErrorCode.FrameTooLarge, message);
  }

  /**
   * Logs what a peer did wrong, up to a limit per connection (the total is logged on close), so
   * that a peer sending garbage cannot flood the log.
   */
  warnAboutPeer(message: string): void {
    this.badFrames++;
    if (this.badFrames <= BAD_FRAME_LOG_LIMIT) {
      log.warn(`Bad frame from ${this.peer ?? this.remote}: ${message}`);
    }
  }

  /** Answers a frame that cannot be processed, and logs it. */
  private badFrame(id: JSONRPCID, code: number, message: string): void {
    this.warnAboutPeer(message);
    if (this.state === 'closed' || this.socket.writableLength > ERROR_REPLY_BACKLOG) return;
    this.socket.write(`${JSON.stringify(errorResponse(id, code, message))}\n`);
  }
}

function uncork(conn: Connection): void {
  conn.flushWrites();
}

export function errorResponse(
  id: JSONRPCID,
  code: number,
  message: string,
  data?: unknown,
): JSONRPCResponse {
  return createJSONRPCErrorResponse(id, code, message, data);
}

function success(id: JSONRPCID, result: unknown): JSONRPCResponse {
  return { jsonrpc: '2.0', id, result } as JSONRPCResponse;
}
