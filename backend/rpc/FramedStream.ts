import type { Duplex } from 'node:stream';
import type { JSONRPCID } from 'json-rpc-2.0';
import { RpcError, RpcErrorCode } from '../protocol/errors.js';
import type { MessageCatalog } from '../protocol/registry.js';
import { getLogger } from '../util/log.js';
import { FrameReader } from './FrameReader.js';
import { FrameWriter } from './FrameWriter.js';
import { oversizeFrame } from './frames.js';
import { errorResponse } from './responses.js';

const log = getLogger('Connection');

/** Past this much unsent output, error replies to a misbehaving peer are dropped, not queued. */
const ERROR_REPLY_BACKLOG = 16 * 1024 * 1024;
const BAD_FRAME_LOG_LIMIT = 10;

/**
 * One connection's stream with its reader and writer, and what lasts from the handshake into the
 * session: who the peer is for logs, the count of its bad frames, the ids of our requests (a late
 * reply to a handshake request must not settle a session's), and how the stream ends. It takes any
 * Duplex: RpcEnv gives it a socket, the tests an in-memory pair.
 */
export class FramedStream {
  readonly reader: FrameReader;
  readonly writer: FrameWriter;
  /** Who is at the other end, in logs and errors: `remote`, until the handshake names the peer. */
  peerName: string;
  /**
   * On a TLS connection, the server certificate's fingerprint, which the handshake's proofs cover
   * (auth.ts); undefined on a plain one.
   */
  channelBinding: string | undefined;
  private closed = false;
  private error: Error | undefined;
  private readonly closeListeners: Array<(err: Error | undefined) => void> = [];
  private badFrames = 0;
  private lastRequestId = 0;

  constructor(
    private readonly stream: Duplex,
    readonly maxMessageSize: number,
    /** Where the stream goes (a socket's address), for logs until the peer is known. */
    readonly remote: string,
    /** The messages the env accepts: which of their fields are base64, for reading frames. */
    readonly protocol: MessageCatalog,
  ) {
    this.peerName = remote;
    this.reader = new FrameReader(stream, maxMessageSize);
    this.writer = new FrameWriter(stream, maxMessageSize);
    stream.on('error', (err) => {
      this.error ??= err;
    });
    stream.on('close', () => this.onClosed());
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Why the stream closed: the error given to close(), or the stream's own. */
  get closeError(): Error | undefined {
    return this.error;
  }

  nextRequestId(): number {
    return ++this.lastRequestId;
  }

  /** Calls `listener` once, when the stream closes (at once if it has). */
  whenClosed(listener: (err: Error | undefined) => void): void {
    if (this.closed) listener(this.error);
    else this.closeListeners.push(listener);
  }

  /** Half-closes: what was written goes out, then a FIN; the stream closes once the peer ends too. */
  end(): void {
    this.stream.end();
  }

  /**
   * Closes now. `graceful` lets what was written drain to the peer first (a FIN after the data,
   * then a hard close if the peer does not finish within a second): RpcEnv.stop() uses it so that
   * its last messages (an UnregisterApplication, say) are not lost.
   */
  close(err?: Error, graceful = false): void {
    if (this.closed) return;
    this.error ??= err;
    // What was written this tick goes out before the stream is destroyed, as unbuffered writes did.
    this.writer.flush();
    if (graceful) {
      this.stream.end();
      setTimeout(() => this.stream.destroy(), 1000).unref();
    } else {
      this.stream.destroy();
    }
    this.onClosed();
  }

  /** What a send on the closed stream fails with. */
  closedError(): RpcError {
    const err = this.error;
    if (err instanceof RpcError && err.code === RpcErrorCode.RpcEnvStopped) return err;
    const why = err ? `: ${err.message}` : '';
    return new RpcError(
      RpcErrorCode.ConnectionClosed,
      `Connection to ${this.peerName} closed${why}`,
      undefined,
      { cause: err },
    );
  }

  /**
   * Logs what the peer did wrong, up to a limit per connection (the total is logged on close), so
   * that a peer sending garbage cannot flood the log.
   */
  warnAboutPeer(message: string): void {
    this.badFrames++;
    if (this.badFrames <= BAD_FRAME_LOG_LIMIT) {
      log.warn(`Bad frame from ${this.peerName}: ${message}`);
    }
  }

  /** Answers a frame that cannot be processed, and logs it. */
  answerBadFrame(id: JSONRPCID, code: number, message: string): void {
    this.warnAboutPeer(message);
    if (this.closed || this.writer.backlog > ERROR_REPLY_BACKLOG) return;
    this.writer.writeUnchecked(errorResponse(id, code, message));
  }

  /**
   * Deals with a frame over wick.rpc.message.maxSize: a request (or a frame whose id cannot be
   * read) gets -32004 under its id; a reply is logged, and its id returned, so that the ask it
   * answers fails rather than waits in vain.
   */
  refuseOversize(bytes: number, head: string): JSONRPCID | undefined {
    const message = `Frame of ${bytes} bytes exceeds wick.rpc.message.maxSize (${this.maxMessageSize} bytes)`;
    const { id, isReply } = oversizeFrame(head);
    if (!isReply) {
      this.answerBadFrame(id, RpcErrorCode.FrameTooLarge, message);
      return undefined;
    }
    this.warnAboutPeer(`reply ${message}`);
    return id;
  }

  private onClosed(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.badFrames > BAD_FRAME_LOG_LIMIT) {
      log.warn(`${this.badFrames} bad frames in all from ${this.peerName}`);
    }
    const listeners = this.closeListeners.splice(0);
    for (const listener of listeners) listener(this.error);
  }
}
