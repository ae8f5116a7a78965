/**
 * The handshake as a phase of its own rather than a mode of the session: it owns the stream's
 * reader from the first byte, and when `wick.hello` (then `wick.auth`, when authenticating) has
 * named the peer, it opens the session and hands the reader over, in the very frame that ended it. That order is what the protocol needs, with no queue to keep it:
 * - the server writes its reply, then opens the session: whatever the session writes comes after;
 * - the client opens the session while reading the server's reply, so a request right behind that
 *   reply, even in the same chunk, already reaches the session.
 * ServerHandshake.ts and ClientHandshake.ts are the two sides.
 */
import type { JSONRPCRequest, JSONRPCResponse } from 'json-rpc-2.0';
import { RpcError, RpcErrorCode } from '../protocol/errors.js';
import type { Clock, TimerHandle } from '../util/clock.js';
import type { Credential, KeyRing, Principal } from './credentials.js';
import type { FramedStream } from './FramedStream.js';
import type { FrameTarget } from './FrameReader.js';
import { classifyFrame } from './frames.js';
import { clip } from './peerText.js';
import { errorResponse } from './responses.js';

export const HELLO_METHOD = 'wick.hello';
export const AUTH_METHOD = 'wick.auth';

export interface HandshakeOptions {
  /** This env's address, announced to the peer. */
  readonly address: string;
  /** What this side proves itself with when it dials; undefined: nothing (open). */
  readonly credential: Credential | undefined;
  /** What this side accepts when dialled; undefined: anyone, unproven (open). */
  readonly keys: KeyRing | undefined;
  readonly clock: Clock;
  /** How long the peer has to finish (wick.rpc.connectTimeout). */
  readonly timeoutMs: number;
}

/**
 * Opens the session with `peer` once the handshake is done. It must take over the stream's reader
 * before it returns: the next frame may already be in the chunk being read.
 */
export type OpenSession<S> = (peer: string, principal: Principal) => S;

/**
 * What both sides share: the timeout, the frames that are not part of the handshake, and how the
 * phase ends, open or failed. `result` settles once, either way.
 */
export abstract class HandshakePhase<S> implements FrameTarget {
  readonly result: Promise<S>;
  private resolve!: (session: S) => void;
  private reject!: (err: Error) => void;
  private readonly timer: TimerHandle;
  /** Settled: frames that still reach the phase (after a refusal) are dropped. */
  protected over = false;

  constructor(
    protected readonly stream: FramedStream,
    protected readonly options: HandshakeOptions,
    private readonly openSession: OpenSession<S>,
  ) {
    this.result = new Promise<S>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    this.timer = options.clock.setTimeout(() => this.timedOut(), options.timeoutMs);
    stream.reader.listen(this);
    stream.whenClosed(() => this.onClosed());
  }

  /** A request (or notification) that arrived while this phase has the stream. */
  protected abstract onRequest(request: JSONRPCRequest): void;
  /** A response that arrived while this phase has the stream. */
  protected abstract onResponse(response: JSONRPCResponse): void;
  /** Reply ids of oversize frames: only the client has a request they could answer. */
  protected onOversizeReply(_id: unknown, _bytes: number): void {}
  /** The stream closed before the handshake finished. */
  protected onHungUp(): void {}

  onFrame(text: string): void {
    if (this.over) return;
    const frame = classifyFrame(text, this.stream.peerName, this.stream.protocol);
    switch (frame.kind) {
      case 'bad':
        this.stream.answerBadFrame(frame.id, frame.code, frame.message);
        return;
      case 'response':
        this.onResponse(frame.response);
        return;
      case 'request':
        this.onRequest(frame.request);
        return;
    }
  }

  onOversize(bytes: number, head: string): void {
    if (this.over) return;
    const replyId = this.stream.refuseOversize(bytes, head);
    if (replyId !== undefined) this.onOversizeReply(replyId, bytes);
  }

  /** Anything but the handshake, before it is done: a request is told so, a notification dropped. */
  protected refuseEarly(request: JSONRPCRequest): void {
    if (request.id === undefined) return;
    this.write(
      errorResponse(
        request.id,
        RpcErrorCode.HandshakeRequired,
        `Finish the handshake (wick.hello, then wick.auth when authenticating) before ${clip(request.method)}`,
      ),
    );
  }

  protected write(payload: object): void {
    this.stream.writer.writeUnchecked(payload);
  }

  /** Ends the phase with the session open; from here on the session has the stream. */
  protected open(peer: string, principal: Principal): void {
    if (!this.settle()) return;
    let session: S;
    try {
      session = this.openSession(peer, principal);
    } catch (err) {
      this.reject(err as Error);
      this.stream.close(err as Error);
      return;
    }
    this.resolve(session);
  }

  /**
   * Ends the phase without a session and closes the stream: at once, or (`graceful`) once what
   * was written, such as the server's error reply, has gone out.
   */
  protected fail(err: Error, graceful = false): void {
    if (!this.settle()) return;
    this.reject(err);
    this.stream.close(err, graceful);
  }

  private settle(): boolean {
    if (this.over) return false;
    this.over = true;
    this.timer.cancel();
    return true;
  }

  private timedOut(): void {
    this.fail(
      new RpcError(
        RpcErrorCode.ConnectFailed,
        `Handshake with ${this.stream.peerName} did not finish within ${this.options.timeoutMs} ms (wick.rpc.connectTimeout)`,
      ),
    );
  }

  private onClosed(): void {
    if (this.over) return;
    this.onHungUp();
    this.settle();
    this.reject(this.stream.closedError());
  }
}

/**
 * The answer to `wick.hello` or `wick.auth` on an open session: the handshake is over, so either
 * is out of order. (A notification gets it too, under id null, as it always has.)
 */
export function handshakeAfterOpen(request: JSONRPCRequest): JSONRPCResponse {
  return errorResponse(
    request.id ?? null,
    RpcErrorCode.InvalidRequest,
    request.method === HELLO_METHOD
      ? 'wick.hello was already received on this connection'
      : 'wick.auth is only accepted right after wick.hello with a nonce',
  );
}
