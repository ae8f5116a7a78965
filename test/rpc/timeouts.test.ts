import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { ConfigError, WickConf } from '../../backend/conf/WickConf.js';
import { RpcError, RpcErrorCode } from '../../backend/protocol/errors.js';
import type { WireMessage } from '../../backend/protocol/registry.js';
import { Ping, Pong } from '../../backend/protocol/rpc.js';
import { type RpcCallContext, RpcEndpoint } from '../../backend/rpc/RpcEndpoint.js';
import type { RpcEndpointRef } from '../../backend/rpc/RpcEndpointRef.js';
import { RpcEnv } from '../../backend/rpc/RpcEnv.js';
import { ManualClock } from '../../backend/util/clock.js';
import { TestNoReply, TestSleep } from '../fixtures/testMessages.js';
import { testProtocol } from '../helpers/protocol.js';

/**
 * Ask timeouts of local asks, driven by a ManualClock: time only moves when the test says so,
 * so "not yet" and "now" are exact instants rather than guesses about how long something took.
 */

/** Never answers on its own: it keeps each ask's context so a test can answer it later. */
class Silent extends RpcEndpoint {
  readonly held: RpcCallContext<WireMessage>[] = [];
  constructor() {
    super();
    for (const def of [TestSleep, TestNoReply, Ping]) {
      this.on(def, (_message, ctx) => {
        this.held.push(ctx as RpcCallContext<WireMessage>);
        return undefined;
      });
    }
  }
}

interface Setup {
  env: RpcEnv;
  clock: ManualClock;
  ref: RpcEndpointRef;
  endpoint: Silent;
}

async function setup(t: TestContext, settings?: Record<string, string>): Promise<Setup> {
  const clock = new ManualClock(1_000_000);
  const env = await RpcEnv.create({
    protocol: testProtocol,
    name: 'timeouts',
    clientMode: true,
    clock,
    ...(settings ? { conf: new WickConf(settings) } : {}),
  });
  t.after(() => env.stop());
  const endpoint = new Silent();
  const ref = env.setupEndpoint('Silent', endpoint);
  return { env, clock, ref, endpoint };
}

/** Tracks a promise's outcome so a test can look at it without awaiting it. */
function watch<T>(p: Promise<T>): { state: 'pending' | 'resolved' | 'rejected'; error?: unknown } {
  const w: { state: 'pending' | 'resolved' | 'rejected'; error?: unknown } = { state: 'pending' };
  p.then(
    () => {
      w.state = 'resolved';
    },
    (err) => {
      w.state = 'rejected';
      w.error = err;
    },
  );
  return w;
}

/** Lets the inbox and the promise callbacks run; no time passes on the ManualClock. */
function flush(): Promise<void> {
  return new Promise((r) => setImmediate(r));
}

test('the default ask timeout comes from wick.rpc.askTimeout: nothing at 4999 ms, a timeout at 5000', async (t) => {
  const { clock, ref, endpoint } = await setup(t, { 'wick.rpc.askTimeout': '5s' });
  const asked = watch(ref.ask(TestSleep({ ms: 0 })));
  await flush();
  assert.equal(endpoint.held.length, 1, 'the endpoint got the ask');

  clock.advance(4999);
  await flush();
  assert.equal(asked.state, 'pending');

  clock.advance(1);
  await flush();
  assert.equal(asked.state, 'rejected');
  const err = asked.error;
  assert.ok(err instanceof RpcError, 'an RpcError');
  assert.equal(err.code, RpcErrorCode.AskTimeout);
  assert.ok(err.message.includes(ref.toString()), `names ${ref}: ${err.message}`);
  assert.match(ref.toString(), /^wick:\/\/client-.+\/Silent$/);
  assert.match(err.message, /\bTestSleep\b/, 'names the message type');
  assert.match(err.message, /\b5000 ms\b/, 'names the timeout');
  assert.match(err.message, /wick\.rpc\.askTimeout/, 'names the setting');
});

test('without wick.rpc.askTimeout set, an ask waits 120 s', async (t) => {
  const { clock, ref } = await setup(t);
  const asked = watch(ref.ask(Ping({ seq: 1 })));
  clock.advance(119_999);
  await flush();
  assert.equal(asked.state, 'pending');
  clock.advance(1);
  await flush();
  assert.equal(asked.state, 'rejected');
  assert.equal((asked.error as RpcError).code, RpcErrorCode.AskTimeout);
  assert.match((asked.error as Error).message, /\b120000 ms\b/);
});

test('an explicit timeout overrides the configured one', async (t) => {
  const { clock, ref } = await setup(t, { 'wick.rpc.askTimeout': '5s' });
  const short = watch(ref.ask(Ping({ seq: 1 }), { timeout: 250 }));
  const long = watch(ref.ask(Ping({ seq: 2 }), { timeout: 60_000 }));
  clock.advance(249);
  await flush();
  assert.equal(short.state, 'pending');
  clock.advance(1);
  await flush();
  assert.equal(short.state, 'rejected');
  assert.match((short.error as Error).message, /\b250 ms\b/);

  clock.advance(5_000);
  await flush();
  assert.equal(long.state, 'pending', 'the 5 s default does not apply to a 60 s ask');
  clock.advance(60_000);
  await flush();
  assert.equal(long.state, 'rejected');
});

test('a reply before the timeout resolves the ask and cancels its timer', async (t) => {
  const { clock, ref, endpoint } = await setup(t, { 'wick.rpc.askTimeout': '5s' });
  const before = clock.pendingTimers();
  const reply = ref.ask(Ping({ seq: 7 }));
  assert.equal(clock.pendingTimers(), before + 1);
  await flush();
  clock.advance(4_000);
  endpoint.held[0]?.reply(Pong({ seq: 7 }));
  assert.deepEqual(await reply, Pong({ seq: 7 }));
  assert.equal(clock.pendingTimers(), before, 'the timeout timer is gone');
});

test('a failure before the timeout rejects with the failure, not a timeout', async (t) => {
  const { clock, ref, endpoint } = await setup(t, { 'wick.rpc.askTimeout': '5s' });
  const asked = watch(ref.ask(Ping({ seq: 1 })));
  await flush();
  endpoint.held[0]?.sendFailure(new Error('refused'));
  await flush();
  assert.equal(asked.state, 'rejected');
  assert.equal((asked.error as RpcError).code, RpcErrorCode.HandlerFailed);
  assert.equal((asked.error as Error).message, 'refused');
  clock.advance(10_000);
  await flush();
  assert.equal((asked.error as Error).message, 'refused', 'the timeout fires no second outcome');
});

test('a reply that comes after the timeout is ignored', async (t) => {
  const { clock, ref, endpoint } = await setup(t, { 'wick.rpc.askTimeout': '1s' });
  const asked = watch(ref.ask(Ping({ seq: 1 })));
  await flush();
  clock.advance(1_000);
  await flush();
  assert.equal(asked.state, 'rejected');
  endpoint.held[0]?.reply(Pong({ seq: 1 }));
  await flush();
  assert.equal(asked.state, 'rejected');
  assert.equal((asked.error as RpcError).code, RpcErrorCode.AskTimeout);
});

test('asks time out independently, each at its own deadline', async (t) => {
  const { clock, ref } = await setup(t, { 'wick.rpc.askTimeout': '3s' });
  const first = watch(ref.ask(Ping({ seq: 1 })));
  clock.advance(1_000);
  const second = watch(ref.ask(Ping({ seq: 2 })));
  clock.advance(2_000);
  await flush();
  assert.deepEqual([first.state, second.state], ['rejected', 'pending']);
  clock.advance(999);
  await flush();
  assert.equal(second.state, 'pending');
  clock.advance(1);
  await flush();
  assert.equal(second.state, 'rejected');
});

test('a wick.rpc.askTimeout that is not a duration is refused when the env is created', async () => {
  await assert.rejects(
    RpcEnv.create({
      protocol: testProtocol,
      name: 'bad-conf',
      clientMode: true,
      conf: new WickConf({ 'wick.rpc.askTimeout': 'soon' }),
    }),
    (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.match(err.message, /wick\.rpc\.askTimeout/);
      assert.match(err.message, /"soon"/);
      assert.match(err.message, /duration/);
      return true;
    },
  );
});
