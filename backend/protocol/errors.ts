/**
 * The one error type of the wire (the idea of vscode-jsonrpc's ResponseError): a JSON-RPC error
 * code, a message for people, and optional data. Codes from -32700 to -32600 are JSON-RPC's own;
 * -32000 and below are Wick's. docs/protocol.md lists them all.
 */
export const RpcErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  /** The receiving endpoint's handler threw; data.remoteStack holds its stack. */
  HandlerFailed: -32000,
  EndpointNotFound: -32001,
  UnsupportedMessage: -32002,
  RpcEnvStopped: -32003,
  FrameTooLarge: -32004,
  AuthenticationFailed: -32005,
  HandshakeRequired: -32006,
  /** A reply that is not a valid message. */
  InvalidReply: -32007,
  /** A file server does not offer the file asked for (by its SHA-256). */
  FileNotOffered: -32020,
  /** An executor's shuffle server does not have the map output asked for. */
  ShuffleBlockNotFound: -32021,
  /**
   * The sender may not send this message over this connection: its role (what its handshake
   * proved) or its identity (e.g. a worker's message on another connection than that worker's).
   */
  NotPermitted: -32030,
  /**
   * The sender passed a bound of messages in a span of time; the same message may be sent again,
   * unchanged, once data.retryAfterMs has passed. Nothing of it was applied.
   */
  RateLimited: -32031,
  /** Local only: no reply came within the ask's timeout. */
  AskTimeout: -32010,
  /** Local only: the connection closed before the reply came. */
  ConnectionClosed: -32011,
  /** Local only: the connection to the peer could not be made. */
  ConnectFailed: -32012,
} as const;

export type RpcErrorCode = (typeof RpcErrorCode)[keyof typeof RpcErrorCode];

export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'RpcError';
  }

  /** Wraps anything thrown by a handler, keeping a Wick RpcError as it is. */
  static from(err: unknown): RpcError {
    if (err instanceof RpcError) return err;
    if (err instanceof Error) {
      return new RpcError(
        RpcErrorCode.HandlerFailed,
        err.message,
        { errorName: err.name, remoteStack: err.stack },
        { cause: err },
      );
    }
    return new RpcError(RpcErrorCode.HandlerFailed, String(err));
  }
}
