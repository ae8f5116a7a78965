import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { JSONRPCID, JSONRPCRequest } from 'json-rpc-2.0';
import { RpcError, RpcErrorCode } from '../protocol/errors.js';
import { AuthParams, HelloParams } from '../protocol/rpc.js';
import { getLogger } from '../util/log.js';
import { clientProof, newNonce, proofsEqual, serverProof } from './auth.js';
import type { FramedStream } from './FramedStream.js';
import {
  AUTH_METHOD,
  type HandshakeOptions,
  HandshakePhase,
  HELLO_METHOD,
  type OpenSession,
} from './Handshake.js';
import { errorResponse, successResponse } from './responses.js';

const log = getLogger('Connection');
const checkHelloParams = TypeCompiler.Compile(HelloParams);
const checkAuthParams = TypeCompiler.Compile(AuthParams);

/**
 * The accepting side of the handshake (docs/protocol.md, "The handshake"): answers `wick.hello`,
 * and `wick.auth` when authenticating, and resolves to the session it opens once the peer is in;
 * rejects when the peer is refused, hangs up, or takes longer than `options.timeoutMs`.
 */
export function acceptHandshake<S>(
  stream: FramedStream,
  options: HandshakeOptions,
  open: OpenSession<S>,
): Promise<S> {
  return new ServerHandshake(stream, options, open).result;
}

class ServerHandshake<S> extends HandshakePhase<S> {
  /** What is expected next: a wick.hello, or (after one with a nonce) the wick.auth. */
  private expecting: 'hello' | 'auth' = 'hello';
  private claimedPeer = '';
  private clientNonce = '';
  private challenge = '';

  protected onRequest(request: JSONRPCRequest): void {
    if (request.method === HELLO_METHOD) this.hello(request, request.id ?? null);
    else if (request.method === AUTH_METHOD) this.auth(request, request.id ?? null);
    else this.refuseEarly(request);
  }

  protected onResponse(): void {
    // Nothing was asked: a response here answers nothing, and is dropped.
  }

  private hello(request: JSONRPCRequest, id: JSONRPCID): void {
    if (this.expecting !== 'hello') {
      this.write(
        errorResponse(
          id,
          RpcErrorCode.InvalidRequest,
          'wick.hello was already received on this connection',
        ),
      );
      return;
    }
    if (!checkHelloParams.Check(request.params)) {
      const first = checkHelloParams.Errors(request.params).First();
      this.write(
        errorResponse(
          id,
          RpcErrorCode.InvalidParams,
          `Invalid wick.hello params: ${first ? `${first.path || '/'} ${first.message}` : 'not a HelloParams object'}`,
        ),
      );
      return;
    }
    const params = request.params;
    const secret = this.options.secret;
    const who = `${params.from} (${this.stream.remote})`;
    if (secret === undefined) {
      if (params.nonce) {
        this.refuse(
          id,
          `Refused ${who}: it asked to authenticate, but wick.authenticate is off here`,
          'This RpcEnv does not have wick.authenticate on; turn it on here or off at the peer',
        );
        return;
      }
      this.write(successResponse(id, { version: 1, from: this.options.address }));
      this.open(params.from);
      return;
    }
    if (!params.nonce) {
      this.refuse(
        id,
        `Refused ${who}: it did not authenticate, and wick.authenticate is on here`,
        'Authentication required: set wick.authenticate=true and the shared secret (wick.authenticate.secret or WICK_AUTH_SECRET)',
      );
      return;
    }
    this.claimedPeer = params.from;
    this.clientNonce = params.nonce;
    this.challenge = newNonce();
    this.expecting = 'auth';
    this.write(
      successResponse(id, {
        version: 1,
        from: this.options.address,
        challenge: this.challenge,
        proof: serverProof(secret, params.nonce, this.challenge),
      }),
    );
  }

  private auth(request: JSONRPCRequest, id: JSONRPCID): void {
    const secret = this.options.secret;
    if (this.expecting !== 'auth' || secret === undefined) {
      this.write(
        errorResponse(
          id,
          RpcErrorCode.InvalidRequest,
          'wick.auth is only accepted right after wick.hello with a nonce',
        ),
      );
      return;
    }
    if (
      !checkAuthParams.Check(request.params) ||
      !proofsEqual(request.params.proof, clientProof(secret, this.clientNonce, this.challenge))
    ) {
      this.refuse(
        id,
        `Refused ${this.claimedPeer} (${this.stream.remote}): authentication failed, its proof does not match our secret`,
        'Authentication failed: check that both sides use the same wick.authenticate.secret',
      );
      return;
    }
    this.write(successResponse(id, { ok: true }));
    this.open(this.claimedPeer);
  }

  /** Says why, then hangs up once the reply has gone out. */
  private refuse(id: JSONRPCID, logLine: string, reply: string): void {
    log.warn(logLine);
    this.write(errorResponse(id, RpcErrorCode.AuthenticationFailed, reply));
    this.fail(new RpcError(RpcErrorCode.AuthenticationFailed, logLine), true);
  }

  protected override onHungUp(): void {
    if (this.expecting !== 'auth') return;
    // A client that rejects our proof hangs up without wick.auth; say why on this side too.
    log.warn(
      `Refused ${this.claimedPeer} (${this.stream.remote}): it hung up during authentication; its wick.authenticate.secret probably differs from ours`,
    );
  }
}
