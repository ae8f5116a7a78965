/**
 * Connections and outboxes across processes: one TCP connection per direction, the one its sender
 * dialled (counted from /proc), none taken over by a peer announcing another's address, messages queued while connecting and delivered in order, and a
 * connect that fails failing what was queued, with the next send connecting afresh.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Ping, Pong } from '../../backend/protocol/rpc.js';
import { RpcEnv, RpcError, RpcErrorCode } from '../../backend/rpc/index.js';
import { TestGetLog, TestRecord } from '../fixtures/testMessages.js';
import { checkNothingLeftRunning } from '../helpers/leaks.js';
import { connectionsBetween, unusedPort } from '../helpers/net.js';
import { Peer, RawClient } from '../helpers/peer.js';
import { testProtocol } from '../helpers/protocol.js';
import { Recorder } from '../helpers/recorder.js';

checkNothingLeftRunning();

test('two listening envs send each over the connection it dialled: one per direction', async (t) => {
  const [a, b] = await Promise.all([Peer.start(t, { name: 'a' }), Peer.start(t, { name: 'b' })]);
  assert.deepEqual((await a.ask(b.address, 'Echo', Ping({ seq: 1 }))).reply, Pong({ seq: 1 }));
  assert.equal(connectionsBetween(a.pid, b.pid).length, 1);
  // B reaches A by A's listening address: it dials it, rather than trusting the connection whose
  // peer announced that address (anyone could announce it).
  assert.deepEqual((await b.ask(a.address, 'Echo', Ping({ seq: 2 }))).reply, Pong({ seq: 2 }));
  await b.send(a.address, 'Echo', TestRecord({ value: 'from-b' }));
  const aLog = (await b.ask(a.address, 'Echo', TestGetLog({}))).reply?.entries as string[];
  assert.ok(aLog.includes(`record:from-b from ${b.address}`), JSON.stringify(aLog));
  assert.deepEqual((await a.ask(b.address, 'Echo', Ping({ seq: 3 }))).reply, Pong({ seq: 3 }));
  assert.equal(connectionsBetween(a.pid, b.pid).length, 2);
  assert.deepEqual(
    (await a.log('Echo')).filter((e) => e.startsWith('onConnected:')),
    [`onConnected:${b.address}`],
  );
});

test("a peer that announces another env's address does not receive what is sent to it", async (t) => {
  const [a, b] = await Promise.all([Peer.start(t, { name: 'a' }), Peer.start(t, { name: 'b' })]);
  const impostor = await RawClient.connect(a.address, t);
  await impostor.hello(b.address);
  await a.send(b.address, 'Echo', TestRecord({ value: 'for-b-only' }));
  const bLog = (await a.ask(b.address, 'Echo', TestGetLog({}))).reply?.entries as string[];
  assert.ok(bLog.includes(`record:for-b-only from ${a.address}`), JSON.stringify(bLog));
  // B has it, and the reply to the ask after it came back: the impostor got nothing of either.
  assert.deepEqual(
    impostor.frames.filter((f) => f.method !== undefined),
    [],
    JSON.stringify(impostor.frames),
  );
});

test('sends and asks made before the connection is up are queued and delivered in order', async (t) => {
  const peer = await Peer.start(t, { name: 'late' });
  const env = await RpcEnv.create({ protocol: testProtocol, name: 'eager', clientMode: true });
  t.after(() => env.stop());
  // No setupEndpointRef first: every message below is queued in the outbox while it connects.
  const ref = env.endpointRef({ address: peer.address, name: 'Echo' });
  const asks: Promise<unknown>[] = [];
  const values: string[] = [];
  for (let i = 0; i < 100; i++) {
    values.push(String(i));
    ref.send(TestRecord({ value: String(i) }));
    if (i % 10 === 0) asks.push(ref.ask(Ping({ seq: i })));
  }
  const log = await ref.ask(TestGetLog({}));
  assert.deepEqual(
    await Promise.all(asks),
    Array.from({ length: 10 }, (_, i) => Pong({ seq: i * 10 })),
  );
  assert.deepEqual(log.entries, [
    'onStart',
    `onConnected:${env.address}`,
    ...values.map((v) => `record:${v} from ${env.address}`),
  ]);
});

test('a failed connect fails every queued ask naming the address; a later send connects again', async (t) => {
  const port = await unusedPort();
  const address = `127.0.0.1:${port}`;
  const env = await RpcEnv.create({ protocol: testProtocol, name: 'hopeful', clientMode: true });
  t.after(() => env.stop());
  const ref = env.endpointRef({ address, name: 'Echo' });
  ref.send(TestRecord({ value: 'lost' }));
  const asks = [1, 2, 3].map((seq) => ref.ask(Ping({ seq }), { timeout: 60_000 }));
  const failures = await Promise.allSettled(asks);
  for (const f of failures) {
    assert.equal(f.status, 'rejected');
    const err = (f as PromiseRejectedResult).reason;
    assert.ok(err instanceof RpcError, String(err));
    assert.equal(err.code, RpcErrorCode.ConnectFailed);
    assert.equal(err.message, `Failed to connect to wick://${address}: connection refused`);
  }

  // Now someone listens there; the next send connects afresh and the queue starts over.
  const peer = await Peer.start(t, { name: 'arrived', port });
  assert.equal(peer.address, address, 'the port was taken by someone else meanwhile');
  ref.send(TestRecord({ value: 'found' }));
  const log = await ref.ask(TestGetLog({}));
  assert.deepEqual(log.entries, [
    'onStart',
    `onConnected:${env.address}`,
    `record:found from ${env.address}`,
  ]);
});

test('two envs that dial each other at the same moment both get their answers', async (t) => {
  const [a, b] = await Promise.all([Peer.start(t, { name: 'a' }), Peer.start(t, { name: 'b' })]);
  for (let round = 0; round < 5; round++) {
    const [ab, ba] = await Promise.all([
      a.ask(b.address, 'Echo', Ping({ seq: round })),
      b.ask(a.address, 'Echo', Ping({ seq: round })),
    ]);
    assert.deepEqual([ab.ok, ba.ok], [true, true], JSON.stringify([ab, ba]));
  }
  assert.equal(connectionsBetween(a.pid, b.pid).length, 2);
  for (const [peer, other] of [
    [a, b],
    [b, a],
  ] as const) {
    const events = (await peer.log('Echo')).filter((e) => /^on(Connected|Disconnected)/.test(e));
    assert.deepEqual(events, [`onConnected:${other.address}`], `events seen by ${peer.address}`);
  }
});

test('envs that dial each other at once lose nothing sent meanwhile, in order, however the race goes', {
  timeout: 120_000,
}, async () => {
  // In one process, so that many rounds fit: each round, both sides send a burst at once, which
  // makes both dial; the duplicate connection is given up while messages cross it.
  const N = 40;
  for (let round = 0; round < 25; round++) {
    const [a, b] = await Promise.all([
      RpcEnv.create({ protocol: testProtocol, name: 'cross-a', port: 0 }),
      RpcEnv.create({ protocol: testProtocol, name: 'cross-b', port: 0 }),
    ]);
    try {
      const [ra, rb] = [new Recorder(), new Recorder()];
      a.setupEndpoint('Rec', ra);
      b.setupEndpoint('Rec', rb);
      const toB = a.endpointRef({ address: b.address, name: 'Rec' });
      const toA = b.endpointRef({ address: a.address, name: 'Rec' });
      const sendBurst = (ref: typeof toB, tag: string, from: number) => {
        for (let i = from; i < from + N / 2; i++) ref.send(TestRecord({ value: `${tag}${i}` }));
      };
      sendBurst(toB, 'a', 0);
      sendBurst(toA, 'b', 0);
      // A second burst a moment later, while the duplicate is being given up.
      await new Promise((r) => setImmediate(r));
      sendBurst(toB, 'a', N / 2);
      sendBurst(toA, 'b', N / 2);
      const expect = (tag: string) => Array.from({ length: N }, (_, i) => `${tag}${i}`);
      const got = (r: Recorder) => r.all('TestRecord').map((m) => m.value);
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.all([ra.count('TestRecord', N), rb.count('TestRecord', N)]),
        new Promise((_, reject) => {
          timer = setTimeout(
            () =>
              reject(
                new Error(
                  `round ${round}: a got ${got(ra).length}/${N}, b got ${got(rb).length}/${N}`,
                ),
              ),
            10_000,
          );
        }),
      ]).finally(() => clearTimeout(timer));
      assert.deepEqual(got(rb), expect('a'), `round ${round}`);
      assert.deepEqual(got(ra), expect('b'), `round ${round}`);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  }
});
