import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RpcError, RpcErrorCode } from '../../backend/protocol/errors.js';
import type { MessageOf, WireMessage } from '../../backend/protocol/registry.js';
import { Ping, Pong } from '../../backend/protocol/rpc.js';
import { Inbox } from '../../backend/rpc/Inbox.js';
import {
  type RpcCallContext,
  RpcEndpoint,
  type RpcSenderContext,
} from '../../backend/rpc/RpcEndpoint.js';
import { RpcEnv } from '../../backend/rpc/RpcEnv.js';
import { TestFail, TestFailOneWay, TestRecord, TestUnhandled } from '../fixtures/testMessages.js';
import { testProtocol } from '../helpers/protocol.js';
import { captureLog } from '../helpers/rpcAsserts.js';

/**
 * The Inbox on its own, driven with fake call contexts: every ordering claim is checked by
 * handlers that block on promises the test releases, never by timing.
 */

const SENDER = 'client-test';

interface Deferred<T = void> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(err: unknown): void;
}

function deferred<T = void>(): Deferred<T> {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Lets every queued microtask and the inbox's drain loop run to quiescence. */
function flush(): Promise<void> {
  return new Promise((r) => setImmediate(r));
}

/** A fake ask context that records what the inbox answers. */
function fakeCtx(): RpcCallContext & { replies: WireMessage[]; failures: unknown[] } {
  const replies: WireMessage[] = [];
  const failures: unknown[] = [];
  return {
    senderAddress: SENDER,
    replies,
    failures,
    reply: (r) => replies.push(r),
    sendFailure: (e) => failures.push(e),
  };
}

const sender: RpcSenderContext = { senderAddress: SENDER };

function oneWay(value: string) {
  return { kind: 'OneWay' as const, message: TestRecord({ value }), sender };
}

/**
 * An endpoint whose handlers record `start:X` and `end:X` around an optional gate: a handler
 * for a value with a gate waits on it, so the test decides when each handler finishes.
 */
class GatedEndpoint extends RpcEndpoint {
  readonly events: string[] = [];
  readonly gates = new Map<string, Deferred>();
  startGate: Deferred | undefined;
  stopGate: Deferred | undefined;

  gate(value: string): Deferred {
    const d = deferred();
    this.gates.set(value, d);
    return d;
  }

  override async onStart(): Promise<void> {
    this.events.push('start:onStart');
    await this.startGate?.promise;
    this.events.push('end:onStart');
  }

  constructor() {
    super();
    this.on(TestRecord, async ({ value }) => {
      this.events.push(`start:${value}`);
      await this.gates.get(value)?.promise;
      this.events.push(`end:${value}`);
    });
    this.on(Ping, async ({ seq }) => {
      this.events.push(`start:ask${seq}`);
      await this.gates.get(`ask${seq}`)?.promise;
      this.events.push(`end:ask${seq}`);
      return Pong({ seq });
    });
  }

  override onError(err: Error): void {
    this.events.push(`onError:${err.message}`);
  }

  override async onStop(): Promise<void> {
    this.events.push('start:onStop');
    await this.stopGate?.promise;
    this.events.push('end:onStop');
  }
}

class ConcurrentEndpoint extends GatedEndpoint {
  override readonly concurrent = true;
}

test('onStart is handled first even when messages are posted right after the inbox is made', async () => {
  const ep = new GatedEndpoint();
  ep.startGate = deferred();
  const inbox = new Inbox('ep', ep);
  inbox.post(oneWay('a'));
  inbox.post({ kind: 'Rpc', message: Ping({ seq: 1 }), ctx: fakeCtx() });
  inbox.post({ kind: 'Connected', address: '127.0.0.1:1' });
  await flush();
  assert.deepEqual(ep.events, ['start:onStart'], 'nothing may run while onStart is pending');
  ep.startGate.resolve();
  await inbox.stop();
  assert.deepEqual(ep.events, [
    'start:onStart',
    'end:onStart',
    'start:a',
    'end:a',
    'start:ask1',
    'end:ask1',
    'start:onStop',
    'end:onStop',
  ]);
});

test('a serial endpoint handles one message at a time and awaits each handler before the next', async () => {
  const ep = new GatedEndpoint();
  const gateA = ep.gate('a');
  const gateAsk = ep.gate('ask1');
  const inbox = new Inbox('ep', ep);
  const ctx = fakeCtx();
  inbox.post(oneWay('a'));
  inbox.post({ kind: 'Rpc', message: Ping({ seq: 1 }), ctx });
  inbox.post(oneWay('b'));
  await flush();
  assert.deepEqual(ep.events, ['start:onStart', 'end:onStart', 'start:a']);

  gateA.resolve();
  await flush();
  assert.deepEqual(ep.events.slice(3), ['end:a', 'start:ask1'], 'the ask waits for a to end');
  assert.deepEqual(ctx.replies, []);

  gateAsk.resolve();
  await flush();
  assert.deepEqual(ep.events.slice(3), ['end:a', 'start:ask1', 'end:ask1', 'start:b', 'end:b']);
  assert.deepEqual(ctx.replies, [Pong({ seq: 1 })]);
  await inbox.stop();
});

test('many messages whose handlers await different amounts never overlap and keep arrival order', async () => {
  let running = 0;
  let maxRunning = 0;
  const seen: number[] = [];
  class Awaiting extends RpcEndpoint {
    constructor() {
      super();
      this.on(TestRecord, async ({ value }) => {
        const n = Number(value);
        running++;
        maxRunning = Math.max(maxRunning, running);
        // Earlier messages wait longer (in microtask turns), so overlap would reorder them.
        for (let i = 0; i < 50 - n; i++) await Promise.resolve();
        seen.push(n);
        running--;
      });
    }
  }
  const inbox = new Inbox('ep', new Awaiting());
  const expected: number[] = [];
  for (let i = 0; i < 50; i++) {
    inbox.post(oneWay(String(i)));
    expected.push(i);
  }
  await inbox.stop();
  assert.deepEqual(seen, expected);
  assert.equal(maxRunning, 1);
});

test('sync handlers are also handled in arrival order, interleaved with async ones', async () => {
  const seen: string[] = [];
  class Mixed extends RpcEndpoint {
    constructor() {
      super();
      this.on(TestRecord, ({ value: v }) => {
        if (v.startsWith('async')) {
          return Promise.resolve().then(() => {
            seen.push(v);
          });
        }
        seen.push(v);
      });
    }
  }
  const inbox = new Inbox('ep', new Mixed());
  const values = ['sync1', 'async1', 'sync2', 'async2', 'async3', 'sync3'];
  for (const v of values) inbox.post(oneWay(v));
  await inbox.stop();
  assert.deepEqual(seen, values);
});

test('a concurrent endpoint starts handlers without waiting, but only after onStart', async () => {
  const ep = new ConcurrentEndpoint();
  ep.startGate = deferred();
  const gateA = ep.gate('a');
  const gateB = ep.gate('b');
  const inbox = new Inbox('ep', ep);
  inbox.post(oneWay('a'));
  inbox.post(oneWay('b'));
  await flush();
  assert.deepEqual(ep.events, ['start:onStart'], 'concurrent handlers still wait for onStart');

  ep.startGate.resolve();
  await flush();
  assert.deepEqual(ep.events, ['start:onStart', 'end:onStart', 'start:a', 'start:b']);

  gateB.resolve();
  await flush();
  assert.deepEqual(ep.events.slice(4), ['end:b'], 'b may finish before a');
  gateA.resolve();
  await inbox.stop();
  assert.deepEqual(ep.events.slice(4), ['end:b', 'end:a', 'start:onStop', 'end:onStop']);
});

test('onStop of a concurrent endpoint waits for the handlers still running', async () => {
  const ep = new ConcurrentEndpoint();
  const gateA = ep.gate('a');
  const gateAsk = ep.gate('ask1');
  const inbox = new Inbox('ep', ep);
  const ctx = fakeCtx();
  inbox.post(oneWay('a'));
  inbox.post({ kind: 'Rpc', message: Ping({ seq: 1 }), ctx });
  let stopped = false;
  const stopping = inbox.stop().then(() => {
    stopped = true;
  });
  await flush();
  assert.deepEqual(ep.events, ['start:onStart', 'end:onStart', 'start:a', 'start:ask1']);
  assert.equal(stopped, false);

  gateA.resolve();
  await flush();
  await flush();
  assert.ok(!ep.events.includes('start:onStop'), 'onStop must wait for ask1 too');
  assert.equal(stopped, false);

  gateAsk.resolve();
  await stopping;
  assert.deepEqual(ep.events.slice(4), ['end:a', 'end:ask1', 'start:onStop', 'end:onStop']);
  assert.deepEqual(ctx.replies, [Pong({ seq: 1 })]);
});

/**
 * An endpoint whose handlers throw, sync or async: one-way on TestFailOneWay, asked on TestFail.
 * It records TestRecord and answers Ping.
 */
class Throwing extends RpcEndpoint {
  readonly errors: string[] = [];
  readonly received: string[] = [];

  constructor() {
    super();
    this.on(TestFailOneWay, ({ message: text }) => {
      if (text.startsWith('async')) return Promise.reject(new Error(text));
      throw new Error(text);
    });
    this.on(TestRecord, ({ value }) => {
      this.received.push(value);
    });
    this.on(TestFail, ({ message: text }) => {
      if (text.startsWith('async')) {
        return (async () => {
          await Promise.resolve();
          throw new Error(text);
        })();
      }
      throw new Error(text);
    });
    this.on(Ping, ({ seq }) => Pong({ seq }));
  }

  override onError(err: Error): void {
    this.errors.push(err.message);
  }
}

test('a throwing receive, sync or async, reaches onError and the endpoint keeps serving', async () => {
  const ep = new Throwing();
  const inbox = new Inbox('ep', ep);
  inbox.post({ kind: 'OneWay', message: TestFailOneWay({ message: 'sync boom' }), sender });
  inbox.post(oneWay('after-sync'));
  inbox.post({ kind: 'OneWay', message: TestFailOneWay({ message: 'async boom' }), sender });
  inbox.post(oneWay('after-async'));
  await inbox.stop();
  assert.deepEqual(ep.errors, ['sync boom', 'async boom']);
  assert.deepEqual(ep.received, ['after-sync', 'after-async']);
});

test('a throwing receiveAndReply, sync or async, fails the ask, reaches onError, and the endpoint keeps serving', async () => {
  const ep = new Throwing();
  const inbox = new Inbox('ep', ep);
  const failSync = fakeCtx();
  const failAsync = fakeCtx();
  const ok = fakeCtx();
  inbox.post({ kind: 'Rpc', message: TestFail({ message: 'sync boom' }), ctx: failSync });
  inbox.post({ kind: 'Rpc', message: TestFail({ message: 'async boom' }), ctx: failAsync });
  inbox.post({ kind: 'Rpc', message: Ping({ seq: 3 }), ctx: ok });
  await inbox.stop();

  for (const [ctx, text] of [
    [failSync, 'sync boom'],
    [failAsync, 'async boom'],
  ] as const) {
    assert.deepEqual(ctx.replies, []);
    assert.equal(ctx.failures.length, 1, `${text}: exactly one failure`);
    assert.ok(ctx.failures[0] instanceof Error);
    assert.equal((ctx.failures[0] as Error).message, text);
  }
  assert.deepEqual(ep.errors, ['sync boom', 'async boom']);
  assert.deepEqual(ok.replies, [Pong({ seq: 3 })]);
  assert.deepEqual(ok.failures, []);
});

test('receiveAndReply answers by returning a value, and returning nothing sends no reply', async () => {
  class Replies extends RpcEndpoint {
    constructor() {
      super();
      this.on(Ping, ({ seq }) => {
        if (seq === 0) return undefined;
        if (seq === 1) return Pong({ seq });
        return Promise.resolve(Pong({ seq }));
      });
    }
  }
  const inbox = new Inbox('ep', new Replies());
  const ctxs = [fakeCtx(), fakeCtx(), fakeCtx()];
  ctxs.forEach((ctx, seq) => {
    inbox.post({ kind: 'Rpc', message: Ping({ seq }), ctx });
  });
  await inbox.stop();
  assert.deepEqual(
    ctxs.map((c) => c.replies),
    [[], [Pong({ seq: 1 })], [Pong({ seq: 2 })]],
  );
  assert.deepEqual(
    ctxs.map((c) => c.failures),
    [[], [], []],
  );
});

test('an ask can be answered later through ctx.reply, from another handler', async () => {
  class Later extends RpcEndpoint {
    held: RpcCallContext<MessageOf<typeof Pong>> | undefined;
    constructor() {
      super();
      this.on(Ping, ({ seq }, ctx) => {
        if (seq === 1) {
          this.held = ctx;
          return undefined;
        }
        this.held?.reply(Pong({ seq: 1, payload: 'late' }));
        return Pong({ seq });
      });
    }
  }
  const inbox = new Inbox('ep', new Later());
  const first = fakeCtx();
  const second = fakeCtx();
  inbox.post({ kind: 'Rpc', message: Ping({ seq: 1 }), ctx: first });
  await flush();
  assert.deepEqual(first.replies, [], 'no reply until the second ask comes');
  inbox.post({ kind: 'Rpc', message: Ping({ seq: 2 }), ctx: second });
  await inbox.stop();
  assert.deepEqual(first.replies, [Pong({ seq: 1, payload: 'late' })]);
  assert.deepEqual(second.replies, [Pong({ seq: 2 })]);
});

test('onStop runs last, after the messages already queued, and stop() resolves after it', async () => {
  const ep = new GatedEndpoint();
  ep.stopGate = deferred();
  const inbox = new Inbox('ep', ep);
  inbox.post(oneWay('a'));
  inbox.post(oneWay('b'));
  let stopped = false;
  const stopping = inbox.stop().then(() => {
    stopped = true;
  });
  assert.equal(inbox.isStopped, true);
  await flush();
  assert.equal(stopped, false, 'stop() must wait for an async onStop');
  assert.equal(ep.events.at(-1), 'start:onStop');
  ep.stopGate.resolve();
  await stopping;
  assert.deepEqual(ep.events, [
    'start:onStart',
    'end:onStart',
    'start:a',
    'end:a',
    'start:b',
    'end:b',
    'start:onStop',
    'end:onStop',
  ]);
  assert.strictEqual(inbox.stop(), inbox.stop(), 'stop() is idempotent');
});

test('after stop() an ask is failed with "RpcEnv stopped" and a one-way message is dropped', async () => {
  const ep = new GatedEndpoint();
  const inbox = new Inbox('ep', ep);
  const stopping = inbox.stop();
  const ctx = fakeCtx();
  inbox.post({ kind: 'Rpc', message: Ping({ seq: 9 }), ctx });
  inbox.post(oneWay('late'));
  await stopping;
  await flush();
  assert.equal(ctx.failures.length, 1);
  const err = ctx.failures[0];
  assert.ok(err instanceof RpcError, 'an RpcError');
  assert.equal(err.code, RpcErrorCode.RpcEnvStopped);
  assert.match(err.message, /RpcEnv stopped/);
  assert.match(err.message, /\bep\b/, 'names the endpoint');
  assert.deepEqual(ctx.replies, []);
  assert.ok(!ep.events.includes('start:late'));
  assert.ok(!ep.events.includes('start:ask9'));
  assert.equal(ep.events.filter((e) => e === 'start:onStop').length, 1);
});

test('an endpoint without a handler fails an ask with "Unsupported message X from Y" and reports a send to onError', async () => {
  class Bare extends RpcEndpoint {
    readonly errors: Error[] = [];
    override onError(err: Error): void {
      this.errors.push(err);
    }
  }
  const ep = new Bare();
  const inbox = new Inbox('ep', ep);
  const ctx = fakeCtx();
  inbox.post({ kind: 'Rpc', message: TestUnhandled({}), ctx });
  inbox.post({ kind: 'OneWay', message: TestRecord({ value: 'x' }), sender });
  await inbox.stop();
  assert.equal(ctx.failures.length, 1);
  const err = ctx.failures[0];
  assert.ok(err instanceof RpcError);
  assert.equal(err.code, RpcErrorCode.UnsupportedMessage);
  assert.equal(err.message, `Unsupported message TestUnhandled from ${SENDER}`);
  assert.deepEqual(
    ep.errors.map((e) => e.message),
    [
      `Unsupported message TestUnhandled from ${SENDER}`,
      `Unsupported message TestRecord from ${SENDER}`,
    ],
  );
});

test('an onStart that throws reaches onError and the endpoint still receives messages', async () => {
  class BadStart extends Throwing {
    override onStart(): Promise<void> {
      return Promise.reject(new Error('start failed'));
    }
  }
  const ep = new BadStart();
  const inbox = new Inbox('ep', ep);
  inbox.post(oneWay('a'));
  await inbox.stop();
  assert.deepEqual(ep.errors, ['start failed']);
  assert.deepEqual(ep.received, ['a']);
});

test('an onError that throws is logged and does not stop the inbox', async (t) => {
  const lines = captureLog(t);
  class BadOnError extends Throwing {
    override onError(): void {
      throw new Error('onError itself failed');
    }
  }
  const ep = new BadOnError();
  const inbox = new Inbox('broken', ep);
  inbox.post({ kind: 'OneWay', message: TestFailOneWay({ message: 'boom' }), sender });
  inbox.post(oneWay('next'));
  await inbox.stop();
  assert.deepEqual(ep.received, ['next']);
  assert.ok(
    lines.some((l) => l.includes('ERROR') && l.includes('onError of endpoint broken threw')),
    `logged: ${lines.join('\n')}`,
  );
});

test('connection events reach their handlers in order with the messages', async () => {
  const seen: string[] = [];
  class Watcher extends RpcEndpoint {
    constructor() {
      super();
      this.on(TestRecord, ({ value }) => {
        seen.push(`msg:${value}`);
      });
    }
    override onConnected(a: string): void {
      seen.push(`connected:${a}`);
    }
    override async onDisconnected(a: string): Promise<void> {
      await Promise.resolve();
      seen.push(`disconnected:${a}`);
    }
    override onNetworkError(err: Error, a: string): void {
      seen.push(`networkError:${a}:${err.message}`);
    }
  }
  const inbox = new Inbox('ep', new Watcher());
  inbox.post({ kind: 'Connected', address: 'h:1' });
  inbox.post(oneWay('a'));
  inbox.post({ kind: 'NetworkError', address: 'h:1', error: new Error('reset') });
  inbox.post({ kind: 'Disconnected', address: 'h:1' });
  inbox.post(oneWay('b'));
  await inbox.stop();
  assert.deepEqual(seen, [
    'connected:h:1',
    'msg:a',
    'networkError:h:1:reset',
    'disconnected:h:1',
    'msg:b',
  ]);
});

// The same guarantees seen through a real (client-mode, unbound) RpcEnv and its refs.

test('through an RpcEnv: a failing ask rejects with the handler message and the endpoint keeps serving', async (t) => {
  const env = await RpcEnv.create({ protocol: testProtocol, name: 'inbox-test', clientMode: true });
  t.after(() => env.stop());
  const ep = new Throwing();
  const ref = env.setupEndpoint('Thrower', ep);
  await assert.rejects(ref.ask(TestFail({ message: 'sync boom' })), (err: unknown) => {
    assert.ok(err instanceof RpcError);
    assert.equal(err.code, RpcErrorCode.HandlerFailed);
    assert.equal(err.message, 'sync boom');
    return true;
  });
  await assert.rejects(ref.ask(TestFail({ message: 'async boom' })), /async boom/);
  assert.deepEqual(await ref.ask(Ping({ seq: 4 })), Pong({ seq: 4 }));
  assert.deepEqual(ep.errors, ['sync boom', 'async boom']);
});

test('through an RpcEnv: stop() runs onStop, fails an unanswered ask, and refuses later asks', async (t) => {
  const env = await RpcEnv.create({ protocol: testProtocol, name: 'inbox-test', clientMode: true });
  t.after(() => env.stop());
  class Silent extends RpcEndpoint {
    stops = 0;
    constructor() {
      super();
      this.on(Ping, () => undefined);
    }
    override onStop(): void {
      this.stops++;
    }
  }
  const ep = new Silent();
  const ref = env.setupEndpoint('Silent', ep);
  const pending = ref.ask(Ping({ seq: 1 }));
  await env.stop();
  await env.awaitTermination();
  assert.equal(ep.stops, 1);
  for (const p of [pending, ref.ask(Ping({ seq: 2 }))]) {
    await assert.rejects(p, (err: unknown) => {
      assert.ok(err instanceof RpcError);
      assert.equal(err.code, RpcErrorCode.RpcEnvStopped);
      assert.match(err.message, /RpcEnv stopped/);
      return true;
    });
  }
});

test('a sender the endpoint refuses is told NotPermitted, even for a one-way message it asked', async () => {
  class Picky extends RpcEndpoint {
    readonly seen: string[] = [];
    readonly errors: string[] = [];
    constructor() {
      super();
      this.on(TestRecord, ({ value }) => {
        this.seen.push(value);
      });
    }
    override senderProblem(): string | undefined {
      return 'only the test may send it';
    }
    override onError(err: Error): void {
      this.errors.push(err.message);
    }
  }
  const ep = new Picky();
  const inbox = new Inbox('ep', ep);
  const ctx = fakeCtx();
  // Who is checked before how: asked rather than sent, it is still refused for who sent it.
  inbox.post({ kind: 'Rpc', message: TestRecord({ value: 'asked' }), ctx });
  inbox.post(oneWay('sent'));
  await inbox.stop();
  const err = ctx.failures[0];
  assert.ok(err instanceof RpcError);
  assert.equal(err.code, RpcErrorCode.NotPermitted);
  assert.equal(err.message, 'Not permitted: TestRecord: only the test may send it');
  assert.deepEqual(ep.seen, []);
  // Refusals are logged (once per connection), not reported to onError.
  assert.deepEqual(ep.errors, []);
});
