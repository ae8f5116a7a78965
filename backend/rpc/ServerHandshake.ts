import type { JSONRPCID, JSONRPCRequest } from 'json-rpc-2.0';
import { compiledCheck } from '../protocol/compiledCheck.js';
import { RpcError, RpcErrorCode } from '../protocol/errors.js';
import { AuthParams, HelloParams } from '../protocol/rpc.js';
import { getLogger } from '../util/log.js';
import { clientProof, newNonce, proofsEqual, serverProof } from './auth.js';
import { keyText, type Principal, principalText } from './credentials.js';
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
const checkHelloParams = compiledCheck('rpc.HelloParams', HelloParams);
const checkAuthParams = compiledCheck('rpc.AuthParams', AuthParams);
const OPEN: Principal = { kind: 'open' };

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
  private claimed: Principal = { kind: 'cluster' };
  private key: string | undefined;
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
    const keys = this.options.keys;
    const who = `${params.from} (${this.stream.remote})`;
    if (keys === undefined) {
      if (params.nonce) {
        this.refuse(
          id,
          `Refused ${who}: it asked to authenticate, but this side runs open (wick.authenticate=false)`,
          'This RpcEnv runs open (wick.authenticate=false): connect without a secret, or give it the cluster secret',
        );
        return;
      }
      this.write(successResponse(id, { version: 1, from: this.options.address }));
      this.open(params.from, OPEN);
      return;
    }
    if (!params.nonce) {
      this.refuse(
        id,
        `Refused ${who}: it did not authenticate, and authentication is on here`,
        'Authentication required: give this process the cluster secret (WICK_AUTH_SECRET, wick.authenticate.secret or wick.authenticate.secret.file; a master prints how on first start)',
      );
      return;
    }
    const claimed: Principal = params.credential
      ? { kind: params.credential.kind, id: params.credential.id }
      : { kind: 'cluster' };
    const key = keys.keyFor(claimed.kind, params.credential?.id);
    if (key === undefined) {
      this.refuse(
        id,
        `Refused ${who}: it presents a ${principalText(claimed)} key, which this side does not accept`,
        `This RpcEnv does not accept ${principalText(claimed)} keys`,
      );
      return;
    }
    this.claimedPeer = params.from;
    this.claimed = claimed;
    this.key = key;
    this.clientNonce = params.nonce;
    this.challenge = newNonce();
    this.expecting = 'auth';
    this.write(
      successResponse(id, {
        version: 1,
        from: this.options.address,
        challenge: this.challenge,
        proof: serverProof(key, params.nonce, this.challenge, this.stream.channelBinding),
      }),
    );
  }

  private auth(request: JSONRPCRequest, id: JSONRPCID): void {
    const key = this.key;
    if (this.expecting !== 'auth' || key === undefined) {
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
      !proofsEqual(
        request.params.proof,
        clientProof(key, this.clientNonce, this.challenge, this.stream.channelBinding),
      )
    ) {
      this.refuse(
        id,
        `Refused ${this.claimedPeer} (${this.stream.remote}): authentication failed, its proof does not match our ${keyText(this.claimed)}`,
        'Authentication failed: check that both sides use the same cluster secret',
      );
      return;
    }
    this.write(successResponse(id, { ok: true }));
    this.open(this.claimedPeer, this.claimed);
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
      `Refused ${this.claimedPeer} (${this.stream.remote}): it hung up during authentication; its ${keyText(this.claimed)} probably differs from ours`,
    );
  }
}
