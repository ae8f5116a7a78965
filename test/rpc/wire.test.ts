/**
 * Bad input on the wire never takes an env down: each kind gets its JSON-RPC error (or, for a
 * notification, a logged warning), and afterwards the env still answers other peers and, where
 * the connection survives, the same connection. The env runs in its own process; the bad input is
 * written by hand over a raw TCP socket.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, type TestContext, test } from 'node:test';
import { RpcEnv } from '../../backend/rpc/index.js';
import { Peer, RawClient, waitForStderr } from '../helpers/peer.js';
import '../fixtures/testMessages.js';
import { testProtocol } from '../helpers/protocol.js';

/** Only against hangs (every wait here is on an event, never on a clock). */
const HANG_GUARD_MS = 60_000;

const C = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  HandshakeRequired: -32006,
  ConnectionClosed: -32011,
} as const;

let peer: Peer;
let client: RpcEnv;
let seq = 0;

before(async () => {
  peer = await Peer.start(undefined, { name: 'wire-peer', endpoints: ['Echo', 'Other'] });
  client = await RpcEnv.create({ protocol: testProtocol, name: 'wire-client', clientMode: true });
});

after(async () => {
  await client?.stop();
  await peer?.kill();
});

/** A well-formed ask from another connection still succeeds, and the peer process is alive. */
async function assertServing(): Promise<void> {
  const n = ++seq;
  const reply = await client.endpointRef({ address: peer.address, name: 'Echo' }).ask({
    type: 'Ping',
    seq: n,
    payload: `still serving ${n}`,
  });
  assert.deepEqual(reply, { type: 'Pong', seq: n, payload: `still serving ${n}` });
  assert.equal(peer.child.exitCode, null, 'the peer process is still running');
  assert.equal(peer.child.signalCode, null, 'the peer process is still running');
}

/** A well-formed ask on this very connection (already past wick.hello as `from`) still works. */
async function assertSameConnectionWorks(raw: RawClient, from: string): Promise<void> {
  const n = ++seq;
  const r = await raw.ask(from, 'Echo', { type: 'Ping', seq: n });
  assert.deepEqual(r.result, { type: 'Pong', seq: n }, JSON.stringify(r));
}

async function helloed(t: TestContext, from: string): Promise<RawClient> {
  const raw = await RawClient.connect(peer.address, t);
  await raw.hello(from);
  return raw;
}

function ping(from: string, fields: Record<string, unknown> = {}): Record<string, unknown> {
  return { to: 'Echo', from, message: { type: 'Ping', seq: 1, ...fields } };
}

describe('malformed JSON', { timeout: HANG_GUARD_MS }, () => {
  const bad: Array<[string, string | Buffer]> = [
    ['an unfinished object', '{"jsonrpc":"2.0","id":1,'],
    ['a bare word', 'hello'],
    ['a trailing comma', '{"jsonrpc":"2.0","id":1,"method":"Ping",}'],
    ['single quotes', "{'jsonrpc':'2.0'}"],
    ['invalid UTF-8', Buffer.from([0xff, 0xfe, 0x7b, 0xc3, 0x28])],
    ['a NUL byte', '\u0000'],
    ['two values on one line', '{} {}'],
  ];
  for (const [what, text] of bad) {
    test(`${what} gets -32700 with id null, and the connection carries on`, async (t) => {
      const from = `client-parse-${seq}`;
      const raw = await helloed(t, from);
      await raw.write(Buffer.concat([Buffer.from(text), Buffer.from('\n')]));
      const r = await raw.take();
      assert.equal(r.jsonrpc, '2.0');
      assert.equal(r.id, null);
      assert.equal(r.error?.code, C.ParseError, JSON.stringify(r));
      assert.match(r.error?.message ?? '', /parse error/i);
      await assertSameConnectionWorks(raw, from);
      await assertServing();
    });
  }

  test('before wick.hello it is answered the same way', async (t) => {
    const raw = await RawClient.connect(peer.address, t);
    await raw.send('{"not json');
    const r = await raw.take();
    assert.equal(r.id, null);
    assert.equal(r.error?.code, C.ParseError);
    await raw.hello('client-parse-early');
    await assertSameConnectionWorks(raw, 'client-parse-early');
  });
});

describe('not a JSON-RPC 2.0 request', { timeout: HANG_GUARD_MS }, () => {
  const cases: Array<[string, unknown, unknown]> = [
    ['a number', 42, null],
    ['a string', 'just a string', null],
    ['null', null, null],
    ['true', true, null],
    ['an empty batch', [], null],
    ['a batch', [{ jsonrpc: '2.0', id: 5, method: 'Ping', params: ping('x') }], null],
    ['an object without "jsonrpc"', { id: 7, method: 'Ping', params: {} }, 7],
    ['"jsonrpc" 1.0', { jsonrpc: '1.0', id: 8, method: 'Ping', params: {} }, 8],
    ['"jsonrpc" as a number', { jsonrpc: 2, id: 'str-id', method: 'Ping' }, 'str-id'],
    ['a numeric method', { jsonrpc: '2.0', id: 9, method: 5, params: {} }, 9],
    ['a null method', { jsonrpc: '2.0', id: 10, method: null }, 10],
    ['an object as method', { jsonrpc: '2.0', id: 11, method: { a: 1 } }, 11],
    ['an object as id', { jsonrpc: '2.0', id: { a: 1 }, method: 'Ping', params: {} }, null],
    ['a boolean id', { jsonrpc: '2.0', id: true, method: 'Ping', params: {} }, null],
    ['string params', { jsonrpc: '2.0', id: 12, method: 'Ping', params: 'x' }, 12],
    ['numeric params', { jsonrpc: '2.0', id: 13, method: 'Ping', params: 3 }, 13],
    ['neither request nor response', { jsonrpc: '2.0', id: 14 }, 14],
    ['an empty object', {}, null],
  ];
  for (const [what, frame, id] of cases) {
    test(`${what} gets -32600 with id ${JSON.stringify(id)}`, async (t) => {
      const from = `client-invalid-${seq}`;
      const raw = await helloed(t, from);
      await raw.send(JSON.stringify(frame));
      const r = await raw.take();
      assert.equal(r.error?.code, C.InvalidRequest, JSON.stringify(r));
      assert.deepEqual(r.id, id);
      assert.match(r.error?.message ?? '', /invalid request/i);
      await assertSameConnectionWorks(raw, from);
      await assertServing();
    });
  }

  test('an id of 1e400 (not a finite number) gets -32600 with id null', async (t) => {
    const raw = await helloed(t, 'client-inf-id');
    await raw.send('{"jsonrpc":"2.0","id":1e400,"method":"Ping","params":{}}');
    const r = await raw.take();
    assert.equal(r.error?.code, C.InvalidRequest);
    assert.equal(r.id, null);
    await assertSameConnectionWorks(raw, 'client-inf-id');
  });
});

describe('unknown methods', { timeout: HANG_GUARD_MS }, () => {
  for (const method of ['NoSuchMessage', 'constructor', '__proto__', 'toString', '', 'wick.nope']) {
    test(`${JSON.stringify(method)} gets -32601 with its id`, async (t) => {
      const from = `client-unknown-${seq}`;
      const raw = await helloed(t, from);
      const r = await raw.call(method, { to: 'Echo', from, message: { type: method } });
      assert.equal(r.error?.code, C.MethodNotFound, JSON.stringify(r));
      assert.match(r.error?.message ?? '', /method not found/i);
      await assertSameConnectionWorks(raw, from);
      await assertServing();
    });
  }

  test('as a notification it gets no reply, and a warning is logged', async (t) => {
    const raw = await helloed(t, 'client-unknown-notify');
    const mark = peer.stderr.length;
    await raw.send({ jsonrpc: '2.0', method: 'NoSuchNotification', params: {} });
    // The next reply on the connection is the Pong: nothing answered the notification.
    await assertSameConnectionWorks(raw, 'client-unknown-notify');
    assert.equal(raw.frames.length, 0, JSON.stringify(raw.frames));
    await waitForStderr(peer, /WARN.*NoSuchNotification/, mark);
    await assertServing();
  });
});

describe('params that fail the schema get -32602 naming the field', {
  timeout: HANG_GUARD_MS,
}, () => {
  const from = 'client-params';
  const deep = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
  const cases: Array<[string, (from: string) => unknown, RegExp]> = [
    ['a field of the wrong type', (f) => ping(f, { seq: 'one' }), /seq/],
    ['a negative integer', (f) => ping(f, { seq: -1 }), /seq/],
    ['a fraction for an integer', (f) => ping(f, { seq: 1.5 }), /seq/],
    ['a number for a string', (f) => ping(f, { payload: 5 }), /payload/],
    ['a missing field', (f) => ({ to: 'Echo', from: f, message: { type: 'Ping' } }), /seq/],
    ['an extra message field', (f) => ping(f, { sneaky: true }), /sneaky/],
    ['an extra envelope field', (f) => ({ ...ping(f), bonus: 1 }), /bonus/],
    ['"to" of the wrong type', (f) => ({ ...ping(f), to: 5 }), /\bto\b/],
    ['an empty "to"', (f) => ({ ...ping(f), to: '' }), /\bto\b/],
    ['no "message"', (f) => ({ to: 'Echo', from: f }), /message/],
    ['a message without "type"', (f) => ({ to: 'Echo', from: f, message: { seq: 1 } }), /type/],
    ['no "from"', () => ({ to: 'Echo', message: { type: 'Ping', seq: 1 } }), /from/],
    [
      'message.type differing from the method',
      (f) => ({ to: 'Echo', from: f, message: { type: 'Pong', seq: 1 } }),
      /message\.type/,
    ],
    ['"from" not the handshake\'s', () => ping('client-impostor'), /"from"/],
    ['an array as params', () => [1, 2], /envelope/],
  ];
  for (const [what, params, names] of cases) {
    test(what, async (t) => {
      const raw = await helloed(t, from);
      const mark = peer.stderr.length;
      const r = await raw.call('Ping', params(from));
      assert.equal(r.error?.code, C.InvalidParams, JSON.stringify(r));
      assert.match(r.error?.message ?? '', names);
      // Refused in the reply and logged here too, as docs/protocol.md says bad frames are.
      assert.match(await waitForStderr(peer, /WARN[^\n]*refused Ping[^\n]*/, mark), names);
      await assertSameConnectionWorks(raw, from);
      await assertServing();
    });
  }

  test('a deeply nested value where a string belongs', async (t) => {
    const raw = await helloed(t, from);
    const frame = `{"jsonrpc":"2.0","id":77,"method":"Ping","params":{"to":"Echo","from":"${from}","message":{"type":"Ping","seq":1,"payload":${deep(100_000)}}}}`;
    await raw.send(frame);
    const r = await raw.take((f) => f.id === 77);
    assert.equal(r.error?.code, C.InvalidParams, JSON.stringify(r));
    assert.match(r.error?.message ?? '', /payload/);
    await assertSameConnectionWorks(raw, from);
    await assertServing();
  });

  const helloCases: Array<[string, unknown, RegExp]> = [
    ['version 2', { version: 2, from: 'client-h' }, /version/],
    ['no from', { version: 1 }, /from/],
    ['an empty from', { version: 1, from: '' }, /from/],
    ['a nonce that is not hex', { version: 1, from: 'client-h', nonce: 'zz' }, /nonce/],
    ['an extra field', { version: 1, from: 'client-h', extra: 1 }, /extra/],
    ['no params', undefined, /hello/],
  ];
  for (const [what, params, names] of helloCases) {
    test(`wick.hello with ${what}`, async (t) => {
      const raw = await RawClient.connect(peer.address, t);
      const r = await raw.call('wick.hello', params);
      assert.equal(r.error?.code, C.InvalidParams, JSON.stringify(r));
      assert.match(r.error?.message ?? '', names);
      // The connection is still waiting for a valid hello.
      await raw.hello('client-h');
      await assertSameConnectionWorks(raw, 'client-h');
      await assertServing();
    });
  }
});

describe('the handshake comes first', { timeout: HANG_GUARD_MS }, () => {
  test('an ask before wick.hello gets -32006, and a hello afterwards still works', async (t) => {
    const raw = await RawClient.connect(peer.address, t);
    const r = await raw.ask('client-early', 'Echo', { type: 'Ping', seq: 1 });
    assert.equal(r.error?.code, C.HandshakeRequired, JSON.stringify(r));
    assert.match(r.error?.message ?? '', /wick\.hello/);
    // Even an unknown method is refused for want of a handshake.
    const u = await raw.call('NoSuchMessage', {});
    assert.equal(u.error?.code, C.HandshakeRequired, JSON.stringify(u));
    await raw.hello('client-early');
    await assertSameConnectionWorks(raw, 'client-early');
    await assertServing();
  });

  test('a notification before wick.hello is dropped: no reply, not delivered', async (t) => {
    const raw = await RawClient.connect(peer.address, t);
    await raw.send({
      jsonrpc: '2.0',
      method: 'TestRecord',
      params: { to: 'Echo', from: 'client-sneak', message: { type: 'TestRecord', value: 'sneak' } },
    });
    await raw.hello('client-sneak');
    await assertSameConnectionWorks(raw, 'client-sneak');
    assert.equal(raw.frames.length, 0, JSON.stringify(raw.frames));
    assert.ok(!(await peer.log('Echo')).some((e) => e.startsWith('record:sneak')));
  });

  test('wick.auth without authentication, and a second wick.hello, get -32600', async (t) => {
    const raw = await RawClient.connect(peer.address, t);
    const a = await raw.call('wick.auth', { proof: '0'.repeat(64) });
    assert.equal(a.error?.code, C.InvalidRequest, JSON.stringify(a));
    await raw.hello('client-twice');
    const h = await raw.call('wick.hello', { version: 1, from: 'client-other' });
    assert.equal(h.error?.code, C.InvalidRequest, JSON.stringify(h));
    assert.match(h.error?.message ?? '', /already/);
    // The connection keeps its first identity.
    await assertSameConnectionWorks(raw, 'client-twice');
    const r = await raw.ask('client-other', 'Echo', { type: 'Ping', seq: 1 });
    assert.equal(r.error?.code, C.InvalidParams);
  });
});

describe('notifications with bad params', { timeout: HANG_GUARD_MS }, () => {
  const cases: Array<[string, (from: string) => unknown, RegExp]> = [
    [
      'a field of the wrong type',
      (f) => ({ to: 'Echo', from: f, message: { type: 'TestRecord', value: 5 } }),
      /value/,
    ],
    [
      'an extra field',
      (f) => ({ to: 'Echo', from: f, message: { type: 'TestRecord', value: 'v', x: 1 } }),
      /\/x/,
    ],
    ['no message', (f) => ({ to: 'Echo', from: f }), /message/],
    [
      'a forged "from"',
      () => ({ to: 'Echo', from: 'client-forged', message: { type: 'TestRecord', value: 'v' } }),
      /"from"/,
    ],
  ];
  for (const [what, params, names] of cases) {
    test(`${what}: no reply, a logged warning naming the field`, async (t) => {
      const from = `client-notify-${seq}`;
      const raw = await helloed(t, from);
      const mark = peer.stderr.length;
      await raw.send({ jsonrpc: '2.0', method: 'TestRecord', params: params(from) });
      await assertSameConnectionWorks(raw, from);
      assert.equal(raw.frames.length, 0, `no reply expected: ${JSON.stringify(raw.frames)}`);
      const line = await waitForStderr(peer, /WARN[^\n]*TestRecord[^\n]*/, mark);
      assert.match(line, names);
      assert.ok(!(await peer.log('Echo')).some((e) => e.startsWith(`record:`) && e.includes(from)));
      await assertServing();
    });
  }
});

describe('responses nobody asked for', { timeout: HANG_GUARD_MS }, () => {
  const cases: Array<[string, string]> = [
    ['a result for an unknown id', '{"jsonrpc":"2.0","id":424242,"result":{"type":"Pong"}}'],
    ['an error for an unknown id', '{"jsonrpc":"2.0","id":5,"error":{"code":1,"message":"x"}}'],
    ['an error that is a number', '{"jsonrpc":"2.0","id":6,"error":5}'],
    ['an error without a code', '{"jsonrpc":"2.0","id":7,"error":{"message":"m"}}'],
    [
      'an error nested deeply',
      `{"jsonrpc":"2.0","id":8,"error":${'['.repeat(100_000)}${']'.repeat(100_000)}}`,
    ],
    ['a result with id null', '{"jsonrpc":"2.0","id":null,"result":1}'],
  ];
  for (const [what, frame] of cases) {
    test(`${what} is ignored`, async (t) => {
      const from = `client-resp-${seq}`;
      const raw = await helloed(t, from);
      await raw.send(frame);
      await assertSameConnectionWorks(raw, from);
      await assertServing();
    });
  }
});

describe('broken connections', { timeout: HANG_GUARD_MS }, () => {
  test('a half-sent frame, then a disconnect', async (t) => {
    const raw = await helloed(t, 'client-half');
    await raw.write('{"jsonrpc":"2.0","id":3,"method":"Ping","params":{"to":"Echo","fr');
    raw.close();
    await raw.waitClosed();
    await assertServing();
    // Also before any handshake, and with a multi-byte character cut in two.
    const early = await RawClient.connect(peer.address, t);
    await early.write(
      Buffer.from('{"jsonrpc":"2.0","id":1,"method":"wick.hello","params":{"from":"é').subarray(
        0,
        -1,
      ),
    );
    early.close();
    await early.waitClosed();
    await assertServing();
  });

  test('a peer that disconnects while its ask is being handled', async (t) => {
    const raw = await helloed(t, 'client-midask');
    // The slow ask goes to "Other"; the Ping to "Echo" after it proves the peer has read it.
    await raw.send({
      jsonrpc: '2.0',
      id: 1,
      method: 'TestSleep',
      params: { to: 'Other', from: 'client-midask', message: { type: 'TestSleep', ms: 150 } },
    });
    await assertSameConnectionWorks(raw, 'client-midask');
    raw.close();
    await raw.waitClosed();
    // "Other" handles one message at a time: this reply comes after the abandoned one was tried.
    const done = await client
      .endpointRef({ address: peer.address, name: 'Other' })
      .ask({ type: 'TestSleep', ms: 0, tag: 'after' });
    assert.deepEqual(done, { type: 'TestDone', tag: 'after' });
    await assertServing();
  });

  test('an env whose peer dies mid-ask fails the ask with ConnectionClosed', async (t) => {
    const doomed = await Peer.start(t, { name: 'doomed' });
    const ref = client.endpointRef({ address: doomed.address, name: 'Echo' });
    assert.deepEqual(await ref.ask({ type: 'Ping', seq: 1 }), { type: 'Pong', seq: 1 });
    // Settled into a value at once, so the rejection is never "unhandled" while we wait.
    const pending = ref.ask({ type: 'TestNoReply' }, { timeout: 120_000 }).then(
      () => assert.fail('the ask should fail'),
      (err: Error & { code?: number }) => err,
    );
    await doomed.waitForLog(t, 'Echo', (e) => e.some((x) => x.startsWith('noReply')));
    await doomed.kill();
    const err = await pending;
    assert.equal(err.code, C.ConnectionClosed, err.message);
    assert.match(err.message, /closed/i);
    // The client env itself is fine and still talks to the other peer.
    await assertServing();
  });

  test('a burst of bad frames on one connection, then a good ask on it', async (t) => {
    const raw = await helloed(t, 'client-burst');
    const burst: string[] = [];
    for (let i = 0; i < 200; i++) {
      burst.push('{bad', '[]', '{"jsonrpc":"2.0","id":1,"method":"Nope"}', '42');
    }
    await raw.write(`${burst.join('\n')}\n`);
    await assertSameConnectionWorks(raw, 'client-burst');
    await assertServing();
  });
});

describe('a peer that answers asks with garbage', { timeout: HANG_GUARD_MS }, () => {
  const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
  /** What the rogue env replies to the ask with seq n: the text after `"id":<id>,`. */
  const replies: Array<[string, string, number]> = [
    ['a result nested deeply', `"result":${deep}`, -32007],
    ['a result that is not a message', '"result":42', -32007],
    ['a Pong whose field has the wrong type', '"result":{"type":"Pong","seq":"x"}', -32007],
    ['a result of an unknown type', '"result":{"type":"Bogus"}', -32007],
    ['an error nested deeply', `"error":${deep}`, -32600],
    ['an error that is a string', '"error":"nope"', -32600],
    ['an error with a string code', '"error":{"code":"x","message":"m"}', -32600],
  ];

  test('each reply fails the ask with a clear error; the asking env lives on', async (t) => {
    const sockets = new Set<net.Socket>();
    const rogue = net.createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => {});
      let buf = '';
      socket.on('data', (d) => {
        buf += d.toString();
        for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
          const req = JSON.parse(buf.slice(0, nl)) as {
            id?: number;
            method: string;
            params: { message?: { seq?: number } };
          };
          buf = buf.slice(nl + 1);
          if (req.id === undefined) continue;
          if (req.method === 'wick.hello') {
            socket.write(
              `${JSON.stringify({ jsonrpc: '2.0', id: req.id, result: { version: 1, from: address } })}\n`,
            );
          } else {
            const body = replies[req.params.message?.seq ?? 0]?.[1] ?? '"result":null';
            socket.write(`{"jsonrpc":"2.0","id":${req.id},${body}}\n`);
          }
        }
      });
    });
    await new Promise<void>((r) => rogue.listen(0, '127.0.0.1', r));
    const address = `127.0.0.1:${(rogue.address() as net.AddressInfo).port}`;
    t.after(() => {
      for (const s of sockets) s.destroy();
      return new Promise<void>((r) => rogue.close(() => r()));
    });
    const ref = client.endpointRef({ address, name: 'Echo' });
    for (const [i, [what, , code]] of replies.entries()) {
      await assert.rejects(ref.ask({ type: 'Ping', seq: i }), (err: Error & { code?: number }) => {
        assert.equal(err.code, code, `${what}: ${err.message}`);
        assert.ok(err.message.length < 1000, `${what}: the error stays short`);
        return true;
      });
    }
    await assertServing();
  });
});
