import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RpcError, RpcErrorCode } from '../../backend/protocol/errors.js';
import type { WireMessage } from '../../backend/protocol/registry.js';
import { Ping, Pong } from '../../backend/protocol/rpc.js';
import { Dispatcher } from '../../backend/rpc/Dispatcher.js';
import { type RpcCallContext, RpcEndpoint } from '../../backend/rpc/RpcEndpoint.js';
import { RpcEnv } from '../../backend/rpc/RpcEnv.js';
import { TestRecord } from '../fixtures/testMessages.js';
import { testProtocol } from '../helpers/protocol.js';
import { captureLog } from '../helpers/rpcAsserts.js';

const ENV = 'client-dispatcher-test';

class Echo extends RpcEndpoint {
  readonly seen: string[] = [];
  constructor() {
    super();
    this.on(TestRecord, ({ value }) => {
      this.seen.push(value);
    });
    this.on(Ping, ({ seq }) => Pong({ seq }));
  }
  override onStop(): void {
    this.seen.push('onStop');
  }
}

function fakeCtx(): RpcCallContext & { replies: WireMessage[]; failures: unknown[] } {
  const replies: WireMessage[] = [];
  const failures: unknown[] = [];
  return {
    senderAddress: 'client-asker',
    replies,
    failures,
    reply: (r) => replies.push(r),
    sendFailure: (e) => failures.push(e),
  };
}

test('a second endpoint of the same name is refused and the first keeps its name', async () => {
  const d = new Dispatcher(() => ENV);
  const first = new Echo();
  d.register('Echo', first);
  assert.throws(
    () => d.register('Echo', new Echo()),
    /There is already an RpcEndpoint called Echo/,
  );
  d.postOneWay('Echo', TestRecord({ value: 'a' }), { senderAddress: 'x' });
  await d.stop();
  assert.deepEqual(first.seen, ['a', 'onStop']);
});

test('an ask to a missing endpoint fails with "Cannot find endpoint: wick://…"', () => {
  const d = new Dispatcher(() => ENV);
  const ctx = fakeCtx();
  d.postRpc('Nope', Ping({ seq: 1 }), ctx);
  assert.equal(ctx.failures.length, 1);
  const err = ctx.failures[0];
  assert.ok(err instanceof RpcError);
  assert.equal(err.code, RpcErrorCode.EndpointNotFound);
  assert.equal(err.message, `Cannot find endpoint: wick://${ENV}/Nope`);
});

test('a one-way message to a missing endpoint is dropped with a warning naming it', (t) => {
  const lines = captureLog(t);
  const d = new Dispatcher(() => ENV);
  d.postOneWay('Nope', TestRecord({ value: 'a' }), { senderAddress: 'client-sender' });
  assert.ok(
    lines.some(
      (l) =>
        l.includes('WARN') &&
        l.includes('TestRecord') &&
        l.includes('client-sender') &&
        l.includes(`wick://${ENV}/Nope`),
    ),
    lines.join('\n'),
  );
});

test('unregister runs onStop after queued messages and frees the name', async () => {
  const d = new Dispatcher(() => ENV);
  const ep = new Echo();
  d.register('Echo', ep);
  d.postOneWay('Echo', TestRecord({ value: 'queued' }), { senderAddress: 'x' });
  const stopping = d.unregister('Echo');
  assert.equal(d.has('Echo'), false);
  const ctx = fakeCtx();
  d.postRpc('Echo', Ping({ seq: 1 }), ctx);
  assert.equal((ctx.failures[0] as RpcError).code, RpcErrorCode.EndpointNotFound);
  await stopping;
  assert.deepEqual(ep.seen, ['queued', 'onStop']);
  const again = new Echo();
  d.register('Echo', again);
  assert.equal(d.has('Echo'), true);
  await d.unregister('Missing');
  await d.stop();
});

test('after stop() asks fail with "RpcEnv stopped" and new endpoints are refused', async () => {
  const d = new Dispatcher(() => ENV);
  d.register('Echo', new Echo());
  await d.stop();
  const ctx = fakeCtx();
  d.postRpc('Echo', Ping({ seq: 1 }), ctx);
  const err = ctx.failures[0];
  assert.ok(err instanceof RpcError);
  assert.equal(err.code, RpcErrorCode.RpcEnvStopped);
  assert.match(err.message, /RpcEnv stopped/);
  assert.throws(
    () => d.register('Late', new Echo()),
    (e: unknown) => e instanceof RpcError && e.code === RpcErrorCode.RpcEnvStopped,
  );
});

test('postToAll reaches every endpoint', async () => {
  const seen: string[] = [];
  class Watcher extends RpcEndpoint {
    constructor(readonly label: string) {
      super();
    }
    override onConnected(a: string): void {
      seen.push(`${this.label}:${a}`);
    }
  }
  const d = new Dispatcher(() => ENV);
  d.register('A', new Watcher('A'));
  d.register('B', new Watcher('B'));
  d.postToAll({ kind: 'Connected', address: 'h:1' });
  await d.stop();
  assert.deepEqual(seen.sort(), ['A:h:1', 'B:h:1']);
});

// Through an RpcEnv (client mode: nothing binds).

test('through an RpcEnv: duplicate names are refused, including the built-in verifier', async (t) => {
  const env = await RpcEnv.create({
    protocol: testProtocol,
    name: 'dispatcher-test',
    clientMode: true,
  });
  t.after(() => env.stop());
  env.setupEndpoint('Echo', new Echo());
  assert.throws(() => env.setupEndpoint('Echo', new Echo()), /already an RpcEndpoint called Echo/);
  assert.throws(
    () => env.setupEndpoint('endpoint-verifier', new Echo()),
    /already an RpcEndpoint called endpoint-verifier/,
  );
});

test('through an RpcEnv: an ask to a missing endpoint and a ref to one both fail with its URI', async (t) => {
  const env = await RpcEnv.create({
    protocol: testProtocol,
    name: 'dispatcher-test',
    clientMode: true,
  });
  t.after(() => env.stop());
  const missing = env.endpointRef({ address: env.address, name: 'Nope' });
  const expected = `Cannot find endpoint: wick://${env.address}/Nope`;
  await assert.rejects(missing.ask(Ping({ seq: 1 })), (err: unknown) => {
    assert.ok(err instanceof RpcError);
    assert.equal(err.code, RpcErrorCode.EndpointNotFound);
    assert.equal(err.message, expected);
    return true;
  });
  await assert.rejects(env.setupEndpointRef(env.address, 'Nope'), (err: unknown) => {
    assert.ok(err instanceof RpcError);
    assert.equal(err.code, RpcErrorCode.EndpointNotFound);
    assert.equal(err.message, expected);
    return true;
  });
  env.setupEndpoint('Echo', new Echo());
  const ref = await env.setupEndpointRef(env.address, 'Echo');
  assert.deepEqual(await ref.ask(Ping({ seq: 2 })), Pong({ seq: 2 }));
});

test('through an RpcEnv: a stopped endpoint is gone and its name can be used again', async (t) => {
  const env = await RpcEnv.create({
    protocol: testProtocol,
    name: 'dispatcher-test',
    clientMode: true,
  });
  t.after(() => env.stop());
  const first = new Echo();
  const ref = env.setupEndpoint('Echo', first);
  await env.stopEndpoint(ref);
  assert.deepEqual(first.seen, ['onStop']);
  assert.equal(env.hasEndpoint('Echo'), false);
  await assert.rejects(ref.ask(Ping({ seq: 1 })), /Cannot find endpoint/);
  env.setupEndpoint('Echo', new Echo());
  assert.deepEqual(await ref.ask(Ping({ seq: 2 })), Pong({ seq: 2 }));
});
