/**
 * The accepting side of the handshake, with the client played by hand over an in-memory stream:
 * what it answers before, during and after wick.hello / wick.auth, and the frames that come in
 * the same chunk as the last handshake request.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { JSONRPCRequest } from 'json-rpc-2.0';
import { RpcErrorCode } from '../../backend/protocol/errors.js';
import { clientProof, newNonce } from '../../backend/rpc/auth.js';
import { FramedStream } from '../../backend/rpc/FramedStream.js';
import { successResponse } from '../../backend/rpc/responses.js';
import { acceptHandshake } from '../../backend/rpc/ServerHandshake.js';
import { Session } from '../../backend/rpc/Session.js';
import { systemClock } from '../../backend/util/clock.js';
import { setLogSink } from '../../backend/util/log.js';
import { duplexPair, RawEnd } from '../helpers/duplexPair.js';
import { testProtocol } from '../helpers/protocol.js';
import { secretAuth } from '../helpers/secretAuth.js';

const SECRET = 'server-handshake-secret';

/** A server phase on one end of a pair; `served` lists what its session was asked, in order. */
function serve(secret?: string, maxBytes = 1024 * 1024) {
  const [a, b] = duplexPair();
  const stream = new FramedStream(a, maxBytes, 'raw-client', testProtocol);
  const served: JSONRPCRequest[] = [];
  const accepted = acceptHandshake(
    stream,
    { address: 'server:1', ...secretAuth(secret), clock: systemClock, timeoutMs: 30_000 },
    (peer, principal) =>
      new Session(
        stream,
        { peer, principal, direction: 'inbound', clock: systemClock },
        {
          handleRequest(req) {
            served.push(req);
            return req.id === undefined ? null : successResponse(req.id, { served: req.method });
          },
        },
      ),
  );
  accepted.catch(() => {});
  return { raw: new RawEnd(b), accepted, stream, served };
}

const hello = (id: number, params: Record<string, unknown> = { version: 1, from: 'client-x' }) => ({
  jsonrpc: '2.0',
  id,
  method: 'wick.hello',
  params,
});

test('before wick.hello a request is told to finish the handshake; a notification gets nothing', async () => {
  const { raw } = serve();
  raw.send(
    { jsonrpc: '2.0', method: 'Note', params: {} },
    { jsonrpc: '2.0', id: 5, method: 'Ping', params: {} },
  );
  const r = await raw.take();
  assert.equal(r.id, 5);
  assert.equal(r.error?.code, RpcErrorCode.HandshakeRequired);
  assert.match(r.error?.message ?? '', /before Ping$/);
  raw.send(hello(6));
  assert.deepEqual((await raw.take()).result, { version: 1, from: 'server:1' });
});

test('unreadable frames are answered and the handshake goes on', async () => {
  const { raw, accepted } = serve(undefined, 200);
  raw.send(
    '{"not json',
    `{"jsonrpc":"2.0","id":3,"method":"wick.hello","params":{"pad":"${'p'.repeat(300)}"}}`,
  );
  assert.equal((await raw.take()).error?.code, RpcErrorCode.ParseError);
  const big = await raw.take();
  assert.equal(big.id, 3);
  assert.equal(big.error?.code, RpcErrorCode.FrameTooLarge);
  raw.send(hello(4));
  assert.equal((await raw.take()).id, 4);
  assert.equal((await accepted).peer, 'client-x');
});

test('invalid wick.hello params are refused with the reason; a corrected hello gets in', async () => {
  const { raw, accepted } = serve();
  raw.send(hello(1, { version: 2, from: 'client-x' }));
  const r = await raw.take();
  assert.equal(r.error?.code, RpcErrorCode.InvalidParams);
  assert.match(r.error?.message ?? '', /^Invalid wick\.hello params: \/version/);
  raw.send(hello(2));
  assert.deepEqual((await raw.take()).result, { version: 1, from: 'server:1' });
  await accepted;
});

test('wick.auth out of order, and a second wick.hello, are refused and the connection stays', async () => {
  const { raw, accepted } = serve(SECRET);
  raw.send({ jsonrpc: '2.0', id: 1, method: 'wick.auth', params: { proof: 'ab' } });
  assert.equal((await raw.take()).error?.code, RpcErrorCode.InvalidRequest);
  const nonce = newNonce();
  raw.send(hello(2, { version: 1, from: 'client-x', nonce }));
  const { challenge } = (await raw.take()).result as { challenge: string };
  raw.send(hello(3, { version: 1, from: 'client-x', nonce }));
  const again = await raw.take();
  assert.equal(again.error?.code, RpcErrorCode.InvalidRequest);
  assert.match(again.error?.message ?? '', /already received/);
  raw.send({
    jsonrpc: '2.0',
    id: 4,
    method: 'wick.auth',
    params: { proof: clientProof(SECRET, nonce, challenge) },
  });
  assert.deepEqual((await raw.take()).result, { ok: true });
  assert.equal((await accepted).peer, 'client-x');
});

test('requests in the same chunk as wick.hello reach the session in order, after the reply', async () => {
  const { raw, served } = serve();
  raw.send(
    hello(1),
    { jsonrpc: '2.0', id: 2, method: 'First', params: {} },
    { jsonrpc: '2.0', method: 'Second', params: {} },
    { jsonrpc: '2.0', id: 3, method: 'Third', params: {} },
  );
  assert.equal((await raw.take()).id, 1);
  assert.deepEqual((await raw.take()).result, { served: 'First' });
  assert.deepEqual((await raw.take()).result, { served: 'Third' });
  assert.deepEqual(
    served.map((r) => r.method),
    ['First', 'Second', 'Third'],
  );
});

test('requests in the same chunk as wick.auth reach the session too', async () => {
  const { raw, served } = serve(SECRET);
  const nonce = newNonce();
  raw.send(hello(1, { version: 1, from: 'client-x', nonce }));
  const { challenge } = (await raw.take()).result as { challenge: string };
  raw.send(
    {
      jsonrpc: '2.0',
      id: 2,
      method: 'wick.auth',
      params: { proof: clientProof(SECRET, nonce, challenge) },
    },
    { jsonrpc: '2.0', id: 3, method: 'Right', params: {} },
  );
  assert.deepEqual((await raw.take()).result, { ok: true });
  assert.deepEqual((await raw.take()).result, { served: 'Right' });
  assert.equal(served.length, 1);
});

test('a wrong proof is refused, the connection closes, and what came behind it is not served', async (t) => {
  const prev = setLogSink(() => {});
  t.after(() => {
    setLogSink(prev);
  });
  const { raw, accepted, served } = serve(SECRET);
  const nonce = newNonce();
  raw.send(hello(1, { version: 1, from: 'client-x', nonce }));
  await raw.take();
  raw.send(
    { jsonrpc: '2.0', id: 2, method: 'wick.auth', params: { proof: '0'.repeat(64) } },
    { jsonrpc: '2.0', id: 3, method: 'Sneak', params: {} },
  );
  const r = await raw.take();
  assert.equal(r.error?.code, RpcErrorCode.AuthenticationFailed);
  assert.match(r.error?.message ?? '', /Authentication failed/);
  await assert.rejects(
    accepted,
    (err: Error & { code?: number }) => err.code === RpcErrorCode.AuthenticationFailed,
  );
  await raw.closed;
  assert.deepEqual(raw.frames, [], 'no answer to what followed the refused proof');
  assert.deepEqual(served, []);
});
