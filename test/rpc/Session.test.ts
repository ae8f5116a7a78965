/**
 * Session over an in-memory stream, with the peer played by hand (RawEnd) or by another Session:
 * requests matched to responses, timeouts on a ManualClock, serving through the host, frames that
 * are bad or too large, closing, and an older peer's rpc.retire ignored.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { JSONRPCRequest, JSONRPCResponse } from 'json-rpc-2.0';
import { RpcError, RpcErrorCode } from '../../backend/protocol/errors.js';
import { FramedStream } from '../../backend/rpc/FramedStream.js';
import { errorResponse, successResponse } from '../../backend/rpc/responses.js';
import { RETIRE_METHOD, Session, type SessionHost } from '../../backend/rpc/Session.js';
import { ManualClock } from '../../backend/util/clock.js';
import { duplexPair, RawEnd } from '../helpers/duplexPair.js';
import { waitFor } from '../helpers/processes.js';
import { testProtocol } from '../helpers/protocol.js';
import { captureLog, rpcError } from '../helpers/rpcAsserts.js';

type Handler = (req: JSONRPCRequest) => JSONRPCResponse | null | Promise<JSONRPCResponse | null>;

/** A session with peer "peer:1" whose other end the test plays; `host` serves the peer. */
function withRaw(handle: Handler = () => null, maxBytes = 1024 * 1024) {
  const [a, b] = duplexPair();
  const clock = new ManualClock(0);
  const stream = new FramedStream(a, maxBytes, 'raw-socket', testProtocol);
  const session = new Session(
    stream,
    { peer: 'peer:1', principal: { kind: 'open' }, direction: 'outbound', clock },
    { handleRequest: (req) => handle(req) },
  );
  return { session, stream, clock, raw: new RawEnd(b) };
}

test('responses settle the requests with their ids, in whatever order they come', async () => {
  const { session, raw } = withRaw();
  const first = session.request('Ask', { n: 1 }, 5_000, 'late');
  const second = session.request('Ask', { n: 2 }, 5_000, 'late');
  const [r1, r2] = [await raw.take(), await raw.take()];
  assert.deepEqual(r1, { jsonrpc: '2.0', id: 1, method: 'Ask', params: { n: 1 } });
  raw.send(
    { jsonrpc: '2.0', id: r2.id, result: 'two' },
    { jsonrpc: '2.0', id: r1.id, result: 'one' },
  );
  assert.deepEqual([await first, await second], ['one', 'two']);
});

test('an error response rejects with its code, message and data', async () => {
  const { session, raw } = withRaw();
  const asked = session.request('Ask', {}, 5_000, 'late');
  const r = await raw.take();
  raw.send(errorResponse(r.id ?? null, RpcErrorCode.EndpointNotFound, 'no such', { x: 1 }));
  await assert.rejects(asked, (err: unknown) => {
    assert.ok(err instanceof RpcError);
    assert.equal(err.code, RpcErrorCode.EndpointNotFound);
    assert.equal(err.message, 'no such');
    assert.deepEqual(err.data, { x: 1 });
    return true;
  });
});

test('a request times out at its deadline with its message; a late reply changes nothing', async () => {
  const { session, clock, raw } = withRaw();
  const seen: { outcome?: unknown } = {};
  const asked = session.request('Ask', {}, 1_000, 'Ask timed out after 1000 ms').catch((e) => {
    seen.outcome = e;
  });
  const r = await raw.take();
  clock.advance(999);
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(seen.outcome, undefined, 'not yet at 999 ms');
  clock.advance(1);
  await asked;
  const outcome: unknown = seen.outcome;
  assert.ok(outcome instanceof RpcError);
  assert.equal(outcome.code, RpcErrorCode.AskTimeout);
  assert.equal(outcome.message, 'Ask timed out after 1000 ms');
  raw.send({ jsonrpc: '2.0', id: r.id, result: 'too late' });
  // The session carries on: the next request is matched as usual.
  const next = session.request('Ask', {}, 1_000, 'late');
  const r2 = await raw.take();
  raw.send({ jsonrpc: '2.0', id: r2.id, result: 'fine' });
  assert.equal(await next, 'fine');
});

test('a reply cancels its timer', async () => {
  const { session, clock, raw } = withRaw();
  const asked = session.request('Ask', {}, 1_000, 'late');
  assert.equal(clock.pendingTimers(), 1);
  const r = await raw.take();
  raw.send({ jsonrpc: '2.0', id: r.id, result: null });
  await asked;
  assert.equal(clock.pendingTimers(), 0);
});

test("the peer's notifications and requests are served through the host, at once or later", async () => {
  const seen: string[] = [];
  let later: ((res: JSONRPCResponse) => void) | undefined;
  const { raw } = withRaw((req) => {
    seen.push(req.method);
    if (req.method === 'Later') return new Promise((resolve) => (later = resolve));
    return req.id === undefined ? null : successResponse(req.id, { now: req.method });
  });
  raw.send(
    { jsonrpc: '2.0', method: 'Heartbeat', params: {} },
    { jsonrpc: '2.0', id: 1, method: 'Later', params: {} },
    { jsonrpc: '2.0', id: 2, method: 'Now', params: {} },
  );
  assert.deepEqual((await raw.take()).result, { now: 'Now' });
  assert.deepEqual(seen, ['Heartbeat', 'Later', 'Now']);
  later?.(successResponse(1, { at: 'last' }));
  assert.deepEqual(await raw.take(), { jsonrpc: '2.0', id: 1, result: { at: 'last' } });
  assert.equal(raw.frames.length, 0, 'the notification got no answer');
});

test('a host that throws, or answers a request with nothing, makes a -32603 answer', async (t) => {
  captureLog(t);
  const { raw } = withRaw((req) => {
    if (req.method === 'Throw') throw new Error('handler broke');
    if (req.method === 'Reject') return Promise.reject(new Error('later broke'));
    return null;
  });
  raw.send(
    { jsonrpc: '2.0', id: 1, method: 'Throw', params: {} },
    { jsonrpc: '2.0', id: 2, method: 'Nothing', params: {} },
    { jsonrpc: '2.0', id: 3, method: 'Reject', params: {} },
  );
  const answers = [await raw.take(), await raw.take(), await raw.take()];
  assert.deepEqual(
    answers.map((a) => [a.id, a.error?.code, a.error?.message]),
    [
      [1, RpcErrorCode.InternalError, 'handler broke'],
      [2, RpcErrorCode.InternalError, 'Internal error'],
      [3, RpcErrorCode.InternalError, 'later broke'],
    ],
  );
});

test('bad frames are answered and logged up to ten, with the total on close', async (t) => {
  const logged = captureLog(t);
  const { session, raw } = withRaw();
  for (let i = 0; i < 12; i++) raw.send('{"nope');
  for (let i = 0; i < 12; i++) {
    const r = await raw.take();
    assert.equal(r.id, null);
    assert.equal(r.error?.code, RpcErrorCode.ParseError);
  }
  assert.equal(logged.filter((l) => /Bad frame from peer:1/.test(l)).length, 10);
  session.close();
  assert.ok(
    logged.some((l) => /12 bad frames in all from peer:1/.test(l)),
    logged.join('\n'),
  );
});

test('a request over the size limit is refused under its id; the next is served', async () => {
  const { raw } = withRaw((req) => successResponse(req.id ?? null, 'ok'), 100);
  raw.send(
    { jsonrpc: '2.0', id: 41, method: 'Big', params: { pad: 'x'.repeat(200) } },
    { jsonrpc: '2.0', id: 42, method: 'Small', params: {} },
  );
  const r = await raw.take();
  assert.equal(r.id, 41);
  assert.equal(r.error?.code, RpcErrorCode.FrameTooLarge);
  assert.match(
    r.error?.message ?? '',
    /Frame of \d+ bytes exceeds wick\.rpc\.message\.maxSize \(100 bytes\)/,
  );
  assert.equal((await raw.take()).id, 42);
});

test('a reply over the size limit fails the request it answers', async (t) => {
  captureLog(t);
  const { session, raw } = withRaw(undefined, 100);
  const asked = session.request('Ask', {}, 5_000, 'late');
  const r = await raw.take();
  raw.send({ jsonrpc: '2.0', id: r.id, result: { pad: 'x'.repeat(200) } });
  await assert.rejects(asked, rpcError(RpcErrorCode.FrameTooLarge, /^Reply of \d+ bytes .*here$/));
});

test('what is too large to send fails here: an ask, a notification, a spliced one, a reply', async (t) => {
  captureLog(t);
  const { session, raw } = withRaw(
    () => successResponse(1, { type: 'Huge', pad: 'y'.repeat(200) }),
    100,
  );
  await assert.rejects(
    session.request('Ask', { pad: 'x'.repeat(200) }, 5_000, 'late'),
    rpcError(RpcErrorCode.FrameTooLarge, /^Ask of \d+ bytes exceeds .*\(100 bytes\)$/),
  );
  assert.throws(
    () => session.notify('Note', { pad: 'x'.repeat(200) }),
    rpcError(RpcErrorCode.FrameTooLarge, /^Note of/),
  );
  assert.throws(
    () => session.notifyWithBase64('Log', { message: {} }, 'data', 'A'.repeat(200)),
    rpcError(RpcErrorCode.FrameTooLarge, /^Log of/),
  );
  raw.send({ jsonrpc: '2.0', id: 1, method: 'Ask', params: {} });
  const r = await raw.take();
  assert.equal(r.id, 1);
  assert.equal(r.error?.code, RpcErrorCode.FrameTooLarge);
  assert.match(r.error?.message ?? '', /^Reply Huge of \d+ bytes/);
  assert.equal(raw.frames.length, 0, 'nothing else went out');
});

test('closing fails what is waiting, naming the peer; sends afterwards throw', async () => {
  const { session, raw } = withRaw();
  const asked = session.request('Ask', {}, 5_000, 'late');
  await raw.take();
  raw.stream.destroy();
  await assert.rejects(
    asked,
    rpcError(RpcErrorCode.ConnectionClosed, /^Connection to peer:1 closed/),
  );
  assert.ok(session.isClosed);
  assert.throws(() => session.notify('Note', {}), rpcError(RpcErrorCode.ConnectionClosed));
  await assert.rejects(
    session.request('Ask', {}, 5_000, 'late'),
    rpcError(RpcErrorCode.ConnectionClosed),
  );
});

test('closed because the env stopped, the asks fail with RpcEnvStopped itself', async () => {
  const { session, raw } = withRaw();
  const asked = session.request('Ask', {}, 5_000, 'late');
  await raw.take();
  const stopped = new RpcError(RpcErrorCode.RpcEnvStopped, 'RpcEnv stopped');
  session.close(stopped, true);
  await assert.rejects(asked, rpcError(RpcErrorCode.RpcEnvStopped, /^RpcEnv stopped$/));
  await raw.closed;
});

test('failPending fails the asks and leaves the session open', async () => {
  const { session, raw } = withRaw();
  const asked = session.request('Ask', {}, 5_000, 'late');
  await raw.take();
  session.failPending(new RpcError(RpcErrorCode.RpcEnvStopped, 'RpcEnv stopped'));
  await assert.rejects(asked, rpcError(RpcErrorCode.RpcEnvStopped));
  assert.ok(session.isOpen);
  session.notify('StillHere', {});
  assert.equal((await raw.take()).method, 'StillHere');
});

/** Two sessions joined: `dialled` is ours (outbound), `other` the peer's view of it (inbound). */
function joined(
  serve: Handler = (req) => (req.id === undefined ? null : successResponse(req.id, 'ok')),
) {
  const [a, b] = duplexPair();
  const clock = new ManualClock(0);
  const seen: string[] = [];
  const host = (tag: string): SessionHost => ({
    handleRequest(req) {
      seen.push(`${tag}:${req.method}`);
      return serve(req);
    },
  });
  const dialled = new Session(
    new FramedStream(a, 1 << 20, 'b', testProtocol),
    { peer: 'B', principal: { kind: 'open' }, direction: 'outbound', clock },
    host('A'),
  );
  const other = new Session(
    new FramedStream(b, 1 << 20, 'a', testProtocol),
    { peer: 'A', principal: { kind: 'open' }, direction: 'inbound', clock },
    host('B'),
  );
  const closed = (s: Session) => new Promise<void>((r) => s.stream.whenClosed(() => r()));
  return { dialled, other, seen, closed };
}

test('an rpc.retire from an older peer reaches no endpoint, and the session carries on', async () => {
  const { dialled, other, seen } = joined();
  other.notify(RETIRE_METHOD, {});
  other.notify('Later', {});
  await waitFor('the message after it to be served', () => seen.includes('A:Later'));
  assert.deepEqual(seen, ['A:Later'], `${RETIRE_METHOD} is not served as a message`);
  assert.ok(dialled.isOpen);
});

test('an answer that cannot go because our own env stopped is not a warning; any other is', async (t) => {
  const logged = captureLog(t);
  /** A session whose handler answers once `answer` is called, after the session has closed. */
  const closedBeforeAnswer = async (why: Error) => {
    let answer!: () => void;
    const { session, raw } = withRaw(
      (req) =>
        new Promise((resolve) => {
          answer = () => resolve(successResponse(req.id ?? null, 'late'));
        }),
    );
    raw.send({ jsonrpc: '2.0', id: 7, method: 'CheckExistence', params: {} });
    await waitFor('the ask to reach its handler', () => answer !== undefined, 5_000);
    session.close(why);
    answer();
    // The answer is attempted in the handler's promise's callback, before the next turn.
    await new Promise((r) => setImmediate(r));
  };
  await closedBeforeAnswer(new RpcError(RpcErrorCode.RpcEnvStopped, 'RpcEnv stopped'));
  await closedBeforeAnswer(new Error('peer reset'));
  const warnings = logged.filter((l) => /WARN .*Could not answer CheckExistence/.test(l));
  assert.equal(warnings.length, 1, logged.join('\n'));
  assert.match(warnings[0] as string, /peer reset/, logged.join('\n'));
});
