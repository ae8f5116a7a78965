import type { JSONRPCID, JSONRPCRequest, JSONRPCResponse } from 'json-rpc-2.0';
import { RpcError, RpcErrorCode } from '../protocol/errors.js';
import type { Clock } from '../util/clock.js';
import { getLogger } from '../util/log.js';
import type { Principal } from './credentials.js';
import type { FramedStream } from './FramedStream.js';
import type { FrameTarget } from './FrameReader.js';
import { classifyFrame } from './frames.js';
import type { PeerConnection, RpcSenderContext } from './RpcEndpoint.js';
import { errorResponse, responseError } from './responses.js';

const log = getLogger('Connection');

/**
 * What older Wick sent on a duplicate connection it no longer used (JSON-RPC reserves names
 * starting with "rpc." for such internal methods): it reaches no endpoint, and is ignored.
 */
export const RETIRE_METHOD = 'rpc.retire';

/** What a session writes: a request, a notification or a response. */
interface Outgoing {
  jsonrpc: '2.0';
  id?: JSONRPCID;
  method?: string;
  params?: object;
  result?: { type?: unknown };
  error?: unknown;
}

/** Serves what the peer sends (RpcEnv). */
export interface SessionHost {
  /**
   * Serves a request or notification from the peer: its response, null when there is none to
   * send (a notification), or a promise of either (an ask its endpoint answers later).
   */
  handleRequest(
    request: JSONRPCRequest,
    session: Session,
  ): JSONRPCResponse | null | Promise<JSONRPCResponse | null>;
}

export interface SessionOptions {
  /** The peer's env address, from the handshake. */
  readonly peer: string;
  /** What the handshake proved. */
  readonly principal: Principal;
  /** Who dialled: we did (outbound) or the peer did (inbound). */
  readonly direction: 'inbound' | 'outbound';
  readonly clock: Clock;
}

/**
 * JSON-RPC 2.0 over an open connection, in both directions (vscode-jsonrpc's connection): our
 * requests and their responses matched by id, with timeouts; notifications; the peer's requests
 * served through the host. It never throws at its peer's
 * input: whatever arrives gets a JSON-RPC error or a log line, and the session carries on.
 *
 * Every heartbeat and task status passes here, so the common paths allocate little: no promise
 * for a notification or a reply known at once, and no closure per ask.
 */
export class Session implements FrameTarget, PeerConnection {
  readonly peer: string;
  readonly principal: Principal;
  readonly direction: 'inbound' | 'outbound';
  /** The sender of what arrives here: one object, not one per message. */
  readonly sender: RpcSenderContext;
  private readonly clock: Clock;
  private closed = false;
  /** Our requests waiting for their response, by id (what json-rpc-2.0's client kept). */
  private readonly waiting = new Map<JSONRPCID, (response: JSONRPCResponse) => void>();
  private readonly inflight = new Set<JSONRPCID>();

  constructor(
    readonly stream: FramedStream,
    options: SessionOptions,
    private readonly host: SessionHost,
  ) {
    this.peer = options.peer;
    this.principal = options.principal;
    this.direction = options.direction;
    this.clock = options.clock;
    this.sender = { senderAddress: options.peer, connection: this };
    stream.peerName = options.peer;
    stream.reader.listen(this);
    stream.whenClosed(() => this.onClosed());
  }

  /** Where the stream goes, for logs. */
  get remote(): string {
    return this.stream.remote;
  }

  get isOpen(): boolean {
    return !this.closed;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** What an outbox may send on. */
  get isUsable(): boolean {
    return !this.closed;
  }

  /** Bytes written but not yet sent: how far behind the peer is. */
  get writableLength(): number {
    return this.stream.writer.backlog;
  }

  /** Resolves once what was written has drained (or the session closed). */
  drained(): Promise<void> {
    return this.closed ? Promise.resolve() : this.stream.writer.drained();
  }

  /** Sends what this tick wrote now rather than at its end. */
  flushWrites(): void {
    this.stream.writer.flush();
  }

  /** Sends a request and resolves to its result; rejects with an RpcError. */
  request(
    method: string,
    params: object,
    timeoutMs: number,
    timeoutMessage: string,
  ): Promise<unknown> {
    if (this.closed) return Promise.reject(this.stream.closedError());
    const id = this.stream.nextRequestId();
    this.inflight.add(id);
    const timer = this.clock.setTimeout(() => {
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
      if (res.error) throw responseError(res.error);
      return res.result;
    });
  }

  /** Sends a notification; throws if it is too large or the session is closed. */
  notify(method: string, params: object): void {
    if (this.closed) throw this.stream.closedError();
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
    if (this.closed) throw this.stream.closedError();
    const bytes = this.stream.writer.writeSpliced(method, params, field, base64);
    if (bytes !== undefined) {
      throw new RpcError(
        RpcErrorCode.FrameTooLarge,
        `${method} of ${bytes} bytes exceeds wick.rpc.message.maxSize (${this.stream.maxMessageSize} bytes)`,
      );
    }
  }

  /** Closes now; `graceful` lets what was written drain first (see FramedStream.close). */
  close(err?: Error, graceful = false): void {
    this.stream.close(err, graceful);
  }

  /**
   * Fails the asks still waiting on a reply here, and leaves the session open: RpcEnv.stop() does
   * this before waiting for the endpoints' onStop, so that a handler awaiting a remote ask ends
   * instead of holding the stop until that ask times out.
   */
  failPending(err: RpcError): void {
    for (const id of this.inflight) {
      this.receiveReply(errorResponse(id, err.code, err.message));
    }
    this.inflight.clear();
  }

  /** Logs what the peer did wrong, up to a limit per connection. */
  warnAboutPeer(message: string): void {
    this.stream.warnAboutPeer(message);
  }

  onFrame(text: string): void {
    const frame = classifyFrame(text, this.peer, this.stream.protocol);
    switch (frame.kind) {
      case 'bad':
        this.stream.answerBadFrame(frame.id, frame.code, frame.message);
        return;
      case 'response':
        this.receiveReply(frame.response);
        return;
      case 'request':
        this.serve(frame.request);
        return;
    }
  }

  onOversize(bytes: number, head: string): void {
    const id = this.stream.refuseOversize(bytes, head);
    if (id === undefined || !this.inflight.has(id)) return;
    this.receiveReply(
      errorResponse(
        id,
        RpcErrorCode.FrameTooLarge,
        `Reply of ${bytes} bytes exceeds wick.rpc.message.maxSize (${this.stream.maxMessageSize} bytes) here`,
      ),
    );
  }

  private onClosed(): void {
    this.closed = true;
    // Asks still waiting here fail now rather than at their timeout.
    const closed = this.stream.closedError();
    for (const id of this.inflight) {
      this.receiveReply(errorResponse(id, closed.code, closed.message));
    }
    this.inflight.clear();
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

  /**
   * Writes one message. One over wick.rpc.message.maxSize is not sent: our own ask fails here with
   * the size error, a reply is replaced by that error (so the asker does not wait in vain), and a
   * notification throws at its sender.
   */
  private write(payload: Outgoing): void {
    if (this.closed) throw this.stream.closedError();
    const bytes = this.stream.writer.write(payload);
    if (bytes === undefined) return;
    const what =
      payload.method ?? (payload.result?.type ? `Reply ${payload.result.type}` : 'Message');
    const err = new RpcError(
      RpcErrorCode.FrameTooLarge,
      `${what} of ${bytes} bytes exceeds wick.rpc.message.maxSize (${this.stream.maxMessageSize} bytes)`,
    );
    const id = payload.id;
    if (id !== undefined && id !== null && payload.method !== undefined) {
      this.receiveReply(errorResponse(id, err.code, err.message));
      return;
    }
    if (id !== undefined && payload.method === undefined) {
      this.stream.writer.writeUnchecked(errorResponse(id, err.code, err.message));
      log.warn(err.message);
      return;
    }
    throw err;
  }

  private serve(request: JSONRPCRequest): void {
    if (request.method === RETIRE_METHOD && request.id === undefined) return;
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
    response.then(
      (res) => this.answer(request, res),
      (err: unknown) => this.answer(request, this.handlerFailed(request, err)),
    );
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
      // Our own env stopping closed the connection (an executor still asking as its driver ends):
      // expected, and nothing the user can act on, so not a warning at the end of their run.
      const what = `Could not answer ${request.method} from ${this.peer}`;
      if (err instanceof RpcError && err.code === RpcErrorCode.RpcEnvStopped) {
        log.debug(`${what}: ${err.message}`);
      } else {
        log.warn(what, err);
      }
    }
  }

  private handlerFailed(request: JSONRPCRequest, err: unknown): JSONRPCResponse | null {
    log.warn(`Serving ${request.method} from ${this.peer} failed`, err);
    if (request.id === undefined) return null;
    const e = RpcError.from(err);
    return errorResponse(request.id, RpcErrorCode.InternalError, e.message);
  }
}
