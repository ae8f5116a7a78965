import type { JSONRPCID, JSONRPCRequest, JSONRPCResponse } from 'json-rpc-2.0';
import { compiledCheck } from '../protocol/compiledCheck.js';
import { RpcError, RpcErrorCode } from '../protocol/errors.js';
import { previewJSON } from '../protocol/registry.js';
import { HelloResult } from '../protocol/rpc.js';
import { getLogger } from '../util/log.js';
import { clientProof, newNonce, proofsEqual, serverProof } from './auth.js';
import { type Credential, serverPrincipal } from './credentials.js';
import type { FramedStream } from './FramedStream.js';
import {
  AUTH_METHOD,
  type HandshakeOptions,
  HandshakePhase,
  HELLO_METHOD,
  type OpenSession,
} from './Handshake.js';
import { responseError } from './responses.js';

const log = getLogger('Connection');
const checkHelloResult = compiledCheck('rpc.HelloResult', HelloResult);

/**
 * The dialling side of the handshake (docs/protocol.md, "The handshake"): sends `wick.hello`, and
 * `wick.auth` once the server has proved it knows the secret, and resolves to the session it opens
 * on the server's last reply; rejects (and closes) when the server refuses, fails to prove itself,
 * hangs up, or takes longer than `options.timeoutMs`.
 */
export function dialHandshake<S>(
  stream: FramedStream,
  options: HandshakeOptions,
  open: OpenSession<S>,
): Promise<S> {
  return new ClientHandshake(stream, options, open).result;
}

class ClientHandshake<S> extends HandshakePhase<S> {
  private readonly nonce: string | undefined;
  /** The id of our request waiting for its reply. */
  private awaiting: JSONRPCID = null;
  private step: 'hello' | 'auth' = 'hello';
  /** The server, as its wick.hello result named it. */
  private server = '';

  constructor(stream: FramedStream, options: HandshakeOptions, open: OpenSession<S>) {
    super(stream, options, open);
    const credential = options.credential;
    this.nonce = credential === undefined ? undefined : newNonce();
    const params: Record<string, unknown> = { version: 1, from: options.address };
    if (this.nonce) params.nonce = this.nonce;
    if (credential && credential.kind !== 'cluster') {
      params.credential = { kind: credential.kind, id: credential.id };
    }
    this.ask(HELLO_METHOD, params);
  }

  private ask(method: string, params: object): void {
    if (this.over) return;
    this.awaiting = this.stream.nextRequestId();
    this.write({ jsonrpc: '2.0', id: this.awaiting, method, params });
  }

  protected onRequest(request: JSONRPCRequest): void {
    // A Wick server opens only once it has written its reply, and that reply opens us too:
    // a request before it comes from a peer that does not follow the protocol.
    this.refuseEarly(request);
  }

  protected onResponse(response: JSONRPCResponse): void {
    if (response.id !== this.awaiting) return;
    if (response.error) {
      this.fail(responseError(response.error));
      return;
    }
    if (this.step === 'auth') {
      this.open(this.server, serverPrincipal(this.options.credential as Credential));
      return;
    }
    this.helloResult(response.result);
  }

  protected override onOversizeReply(id: JSONRPCID, bytes: number): void {
    if (id !== this.awaiting) return;
    this.fail(
      new RpcError(
        RpcErrorCode.FrameTooLarge,
        `Reply of ${bytes} bytes exceeds wick.rpc.message.maxSize (${this.stream.maxMessageSize} bytes) here`,
      ),
    );
  }

  private helloResult(result: unknown): void {
    if (!checkHelloResult.Check(result)) {
      this.fail(
        new RpcError(
          RpcErrorCode.InvalidRequest,
          `Peer ${this.stream.remote} answered wick.hello with ${previewJSON(result, 200)}, which is not a valid HelloResult`,
        ),
      );
      return;
    }
    const secret = this.options.credential?.key;
    if (secret === undefined || this.nonce === undefined) {
      if (result.challenge) {
        this.refused(
          `Peer ${result.from} requires authentication: give this process the cluster secret (WICK_AUTH_SECRET, wick.authenticate.secret or wick.authenticate.secret.file; the master printed how on its first start, and \`wick secret\` prints it where the master runs)`,
        );
        return;
      }
      this.open(result.from, { kind: 'open' });
      return;
    }
    if (!result.challenge || !result.proof) {
      this.refused(
        `Peer ${result.from} does not authenticate (it runs open, wick.authenticate=false); set wick.authenticate=false here too to talk to it`,
      );
      return;
    }
    if (
      !proofsEqual(
        result.proof,
        serverProof(secret, this.nonce, result.challenge, this.stream.channelBinding),
      )
    ) {
      this.refused(
        `Peer ${result.from} failed authentication: its proof does not match our key; check that both sides use the same cluster secret`,
      );
      return;
    }
    this.server = result.from;
    this.step = 'auth';
    this.ask(AUTH_METHOD, {
      proof: clientProof(secret, this.nonce, result.challenge, this.stream.channelBinding),
    });
  }

  private refused(message: string): void {
    log.warn(message);
    this.fail(new RpcError(RpcErrorCode.AuthenticationFailed, message));
  }
}
