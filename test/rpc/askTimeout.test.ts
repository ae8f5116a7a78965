/**
 * Ask timeouts across processes: a reply slower than the ask's timeout fails it with AskTimeout
 * naming the endpoint, the message type and the timeout, whether the timeout was given to the ask
 * or set by wick.rpc.askTimeout; the late reply is dropped and the connection serves on.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Ping, Pong } from '../../backend/protocol/rpc.js';
import { RpcEnv, RpcError, RpcErrorCode } from '../../backend/rpc/index.js';
import { TestDone, TestSleep } from '../fixtures/testMessages.js';
import { checkNothingLeftRunning } from '../helpers/leaks.js';
import { Peer } from '../helpers/peer.js';
import { testProtocol } from '../helpers/protocol.js';

checkNothingLeftRunning();

test('an ask slower than its timeout fails with AskTimeout, and the late reply is dropped', async (t) => {
  const [peer, env] = await Promise.all([
    Peer.start(t, { name: 'slow' }),
    RpcEnv.create({ protocol: testProtocol, name: 'impatient', clientMode: true }),
  ]);
  t.after(() => env.stop());
  const ref = await env.setupEndpointRef(peer.address, 'Echo');
  await assert.rejects(ref.ask(TestSleep({ ms: 400, tag: 'late' }), { timeout: 100 }), (err) => {
    assert.ok(err instanceof RpcError, String(err));
    assert.equal(err.code, RpcErrorCode.AskTimeout);
    assert.equal(
      err.message,
      `Ask TestSleep to wick://${peer.address}/Echo timed out after 100 ms; this timeout is set by wick.rpc.askTimeout`,
    );
    return true;
  });
  // Queued behind the sleep, so answered after the late TestDone came back and was dropped.
  assert.deepEqual(await ref.ask(TestSleep({ ms: 0, tag: 'next' })), TestDone({ tag: 'next' }));
  assert.deepEqual(await ref.ask(Ping({ seq: 1 })), Pong({ seq: 1 }));
});

test('wick.rpc.askTimeout is the default timeout of an ask', async (t) => {
  const [slow, asker] = await Promise.all([
    Peer.start(t, { name: 'slow' }),
    Peer.start(t, { name: 'asker', conf: { 'wick.rpc.askTimeout': '200ms' } }),
  ]);
  const r = await asker.ask(slow.address, 'Echo', TestSleep({ ms: 5_000 }));
  assert.deepEqual(
    [r.ok, r.code, r.error],
    [
      false,
      RpcErrorCode.AskTimeout,
      `Ask TestSleep to wick://${slow.address}/Echo timed out after 200 ms; this timeout is set by wick.rpc.askTimeout`,
    ],
  );
  // The asker still reaches the slow env over the same connection (its Echo is still asleep).
  assert.equal((await asker.verify(slow.address, 'Echo')).ok, true);
});
