/**
 * wick.rpc.message.maxSize: a frame over the limit is refused with -32004 naming its size and the
 * limit, whichever side notices, and nothing hangs and nothing else on the connection is lost.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { WickConf } from '../../backend/conf/WickConf.js';
import { RpcEnv } from '../../backend/rpc/index.js';
import { Peer, RawClient } from '../helpers/peer.js';
import '../fixtures/testMessages.js';
import { testProtocol } from '../helpers/protocol.js';

/** Only against hangs (every wait here is on an event, never on a clock). */
const HANG_GUARD_MS = 60_000;

const FrameTooLarge = -32004;
const LIMIT = 64 * 1024;

/** The peer refuses frames over 64 KiB; `roomy` keeps the default 128 MiB. */
let small: Peer;
let roomy: Peer;
let client: RpcEnv;

before(async () => {
  [small, roomy] = await Promise.all([
    Peer.start(undefined, { name: 'small', conf: { 'wick.rpc.message.maxSize': '64k' } }),
    Peer.start(undefined, { name: 'roomy' }),
  ]);
  client = await RpcEnv.create({ protocol: testProtocol, name: 'size-client', clientMode: true });
});

after(async () => {
  await client?.stop();
  await Promise.all([small?.kill(), roomy?.kill()]);
});

async function assertServing(peer: Peer): Promise<void> {
  const reply = await client
    .endpointRef({ address: peer.address, name: 'Echo' })
    .ask({ type: 'Ping', seq: 5, payload: 'ok' });
  assert.deepEqual(reply, { type: 'Pong', seq: 5, payload: 'ok' });
  assert.equal(small.child.exitCode, null);
  assert.equal(roomy.child.exitCode, null);
}

function pingFrame(id: number, from: string, payload: string): string {
  return JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'Ping',
    params: { to: 'Echo', from, message: { type: 'Ping', seq: id, payload } },
  });
}

test('a received frame over the limit gets -32004 naming its size and the limit', {
  timeout: HANG_GUARD_MS,
}, async (t) => {
  const raw = await RawClient.connect(small.address, t);
  await raw.hello('client-big');
  const frame = pingFrame(1, 'client-big', 'é'.repeat(50_000));
  const bytes = Buffer.byteLength(frame);
  assert.ok(bytes > LIMIT);
  await raw.send(frame);
  const r = await raw.take();
  assert.equal(r.error?.code, FrameTooLarge, JSON.stringify(r));
  assert.match(r.error?.message ?? '', new RegExp(`\\b${bytes} bytes\\b`));
  assert.match(r.error?.message ?? '', new RegExp(`\\b${LIMIT}\\b`));
  assert.match(r.error?.message ?? '', /wick\.rpc\.message\.maxSize/);
  // The next frame on the same connection is read as usual.
  const ok = await raw.ask('client-big', 'Echo', { type: 'Ping', seq: 2, payload: 'small' });
  assert.deepEqual(ok.result, { type: 'Pong', seq: 2, payload: 'small' });
  await assertServing(small);
});

test('a frame just at the limit is accepted; one byte more is refused', {
  timeout: HANG_GUARD_MS,
}, async (t) => {
  const raw = await RawClient.connect(small.address, t);
  await raw.hello('client-edge');
  const base = Buffer.byteLength(pingFrame(3, 'client-edge', ''));
  // Frame bytes exclude the newline.
  const atLimit = pingFrame(3, 'client-edge', 'a'.repeat(LIMIT - base));
  assert.equal(Buffer.byteLength(atLimit), LIMIT);
  await raw.send(atLimit);
  const r = await raw.take();
  assert.equal(r.id, 3);
  assert.equal(r.result?.type, 'Pong', JSON.stringify(r).slice(0, 300));
  const over = pingFrame(4, 'client-edge', 'a'.repeat(LIMIT - base + 1));
  await raw.send(over);
  const r2 = await raw.take();
  assert.equal(r2.error?.code, FrameTooLarge);
  assert.match(r2.error?.message ?? '', new RegExp(`\\b${LIMIT + 1} bytes\\b`));
  await assertServing(small);
});

test('an oversized frame that trickles in over many writes is refused once, then reading goes on', {
  timeout: HANG_GUARD_MS,
}, async (t) => {
  const raw = await RawClient.connect(small.address, t);
  await raw.hello('client-trickle');
  const frame = pingFrame(7, 'client-trickle', 'z'.repeat(3 * LIMIT));
  const buf = Buffer.from(`${frame}\n${pingFrame(8, 'client-trickle', 'after')}\n`);
  for (let i = 0; i < buf.length; i += 10_000) {
    await raw.write(buf.subarray(i, i + 10_000));
    await new Promise((r) => setImmediate(r));
  }
  const refused = await raw.take((f) => f.error?.code === FrameTooLarge);
  assert.match(refused.error?.message ?? '', new RegExp(`\\b${Buffer.byteLength(frame)} bytes\\b`));
  const ok = await raw.take((f) => f.id === 8);
  assert.deepEqual(ok.result, { type: 'Pong', seq: 8, payload: 'after' });
  assert.equal(
    raw.frames.filter((f) => f.error?.code === FrameTooLarge).length,
    0,
    'one error for one frame',
  );
  await assertServing(small);
});

test('an oversized frame before the handshake is refused too', {
  timeout: HANG_GUARD_MS,
}, async (t) => {
  const raw = await RawClient.connect(small.address, t);
  await raw.send(
    `{"jsonrpc":"2.0","id":1,"method":"wick.hello","params":{"pad":"${'p'.repeat(LIMIT)}"}}`,
  );
  const r = await raw.take();
  assert.equal(r.error?.code, FrameTooLarge);
  await raw.hello('client-late');
  const ok = await raw.ask('client-late', 'Echo', { type: 'Ping', seq: 1 });
  assert.deepEqual(ok.result, { type: 'Pong', seq: 1 });
});

test('an ask too big to send is refused by the sender, naming size and limit', {
  timeout: HANG_GUARD_MS,
}, async (t) => {
  const env = await RpcEnv.create({
    protocol: testProtocol,
    name: 'small-sender',
    clientMode: true,
    conf: new WickConf({ 'wick.rpc.message.maxSize': '64k' }),
  });
  t.after(() => env.stop());
  const ref = env.endpointRef({ address: roomy.address, name: 'Echo' });
  await assert.rejects(
    ref.ask({ type: 'Ping', seq: 1, payload: 'x'.repeat(LIMIT) }),
    (err: Error & { code?: number }) => {
      assert.equal(err.code, FrameTooLarge, err.message);
      assert.match(err.message, /Ping/);
      assert.match(err.message, /\b\d{5,} bytes\b/);
      assert.match(err.message, new RegExp(`\\b${LIMIT}\\b`));
      return true;
    },
  );
  // Nothing was sent, and the same env goes on asking over the same connection.
  assert.deepEqual(await ref.ask({ type: 'Ping', seq: 2 }), { type: 'Pong', seq: 2 });
  const log = await roomy.log('Echo');
  assert.ok(!log.some((e) => e.includes('onError')), JSON.stringify(log));
  // A send that is too big throws at the caller rather than vanishing.
  assert.throws(
    () => ref.send({ type: 'TestRecord', value: 'y'.repeat(LIMIT) }),
    (err: Error & { code?: number }) => err.code === FrameTooLarge,
  );
});

test('a reply too big for the replier fails the ask with FrameTooLarge instead of hanging', {
  timeout: HANG_GUARD_MS,
}, async () => {
  const ref = client.endpointRef({ address: small.address, name: 'Echo' });
  await assert.rejects(
    ref.ask({ type: 'TestBig', bytes: 2 * LIMIT }, { timeout: 120_000 }),
    (err: Error & { code?: number }) => {
      assert.equal(err.code, FrameTooLarge, err.message);
      assert.match(err.message, /TestBlob/);
      assert.match(err.message, /\b\d{6,} bytes\b/);
      assert.match(err.message, new RegExp(`\\b${LIMIT}\\b`));
      return true;
    },
  );
  await assertServing(small);
});

test('a reply too big for the asker fails the ask with FrameTooLarge instead of hanging', {
  timeout: HANG_GUARD_MS,
}, async (t) => {
  const env = await RpcEnv.create({
    protocol: testProtocol,
    name: 'small-asker',
    clientMode: true,
    conf: new WickConf({ 'wick.rpc.message.maxSize': '64k' }),
  });
  t.after(() => env.stop());
  const ref = env.endpointRef({ address: roomy.address, name: 'Echo' });
  await assert.rejects(
    ref.ask({ type: 'TestBig', bytes: 2 * LIMIT }, { timeout: 120_000 }),
    (err: Error & { code?: number }) => {
      assert.equal(err.code, FrameTooLarge, err.message);
      assert.match(err.message, /\b\d{6,} bytes\b/);
      assert.match(err.message, new RegExp(`\\b${LIMIT}\\b`));
      return true;
    },
  );
  assert.deepEqual(await ref.ask({ type: 'Ping', seq: 3 }), { type: 'Pong', seq: 3 });
});

test('an ask too big for the receiver fails with FrameTooLarge instead of hanging', {
  timeout: HANG_GUARD_MS,
}, async () => {
  // The client allows 128 MiB, the peer 64 KiB: the peer refuses the frame.
  const ref = client.endpointRef({ address: small.address, name: 'Echo' });
  await assert.rejects(
    ref.ask({ type: 'Ping', seq: 1, payload: 'q'.repeat(2 * LIMIT) }, { timeout: 120_000 }),
    (err: Error & { code?: number }) => {
      assert.equal(err.code, FrameTooLarge, err.message);
      assert.match(err.message, new RegExp(`\\b${LIMIT}\\b`));
      return true;
    },
  );
  await assertServing(small);
});
