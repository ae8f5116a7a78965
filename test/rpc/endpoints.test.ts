/**
 * Endpoints across processes: registering one, looking one up (Spark's RpcEndpointVerifier),
 * send and ask, and what a caller sees when a handler throws or is missing. The env under test
 * runs in a peer process; the caller is an env in this process or another peer.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Ping, Pong } from '../../backend/protocol/rpc.js';
import { RpcAddress, RpcEnv, type RpcError, RpcErrorCode } from '../../backend/rpc/index.js';
import { TestFail, TestGetLog, TestRecord, TestUnhandled } from '../fixtures/testMessages.js';
import { checkNothingLeftRunning } from '../helpers/leaks.js';
import { Peer } from '../helpers/peer.js';
import { testProtocol } from '../helpers/protocol.js';
import { rpcError } from '../helpers/rpcAsserts.js';

checkNothingLeftRunning();

async function clientEnv(t: { after(fn: () => unknown): void }): Promise<RpcEnv> {
  const env = await RpcEnv.create({ protocol: testProtocol, name: 'caller', clientMode: true });
  t.after(() => env.stop());
  return env;
}

test('a second endpoint of the same name is refused, and the first keeps serving', async (t) => {
  const [peer, env] = await Promise.all([Peer.start(t, { name: 'named' }), clientEnv(t)]);
  const again = await peer.setupEndpoint('Echo');
  assert.equal(again.ok, false);
  assert.equal(again.error, 'There is already an RpcEndpoint called Echo');
  const verifier = await peer.setupEndpoint('endpoint-verifier');
  assert.equal(verifier.error, 'There is already an RpcEndpoint called endpoint-verifier');
  assert.equal((await peer.setupEndpoint('Other')).ok, true);

  const echo = await env.setupEndpointRef(peer.address, 'Echo');
  assert.deepEqual(await echo.ask(Ping({ seq: 1 })), Pong({ seq: 1 }));
  const other = await env.setupEndpointRefByURI(`wick://${peer.address}/Other`);
  assert.deepEqual(await other.ask(Ping({ seq: 2 })), Pong({ seq: 2 }));
  // Still the first Echo: it started once and saw this env connect.
  assert.deepEqual((await peer.log('Echo')).slice(0, 2), ['onStart', `onConnected:${env.address}`]);
});

test('setupEndpointRef and setupEndpointRefByURI find an existing endpoint and refuse a missing one', async (t) => {
  const [peer, other, env] = await Promise.all([
    Peer.start(t, { name: 'target' }),
    Peer.start(t, { name: 'looker' }),
    clientEnv(t),
  ]);
  const byAddress = await env.setupEndpointRef(peer.address, 'Echo');
  assert.equal(byAddress.toString(), `wick://${peer.address}/Echo`);
  const byRpcAddress = await env.setupEndpointRef(RpcAddress.parse(peer.address), 'Echo');
  assert.equal(byRpcAddress.address, peer.address);
  const byURI = await env.setupEndpointRefByURI(`wick://${peer.address}/Echo`);
  assert.deepEqual(await byURI.ask(Ping({ seq: 3 })), Pong({ seq: 3 }));

  const missing = `Cannot find endpoint: wick://${peer.address}/Nobody`;
  await assert.rejects(
    env.setupEndpointRef(peer.address, 'Nobody'),
    rpcError(RpcErrorCode.EndpointNotFound, missing),
  );
  await assert.rejects(
    env.setupEndpointRefByURI(`wick://${peer.address}/Nobody`),
    rpcError(RpcErrorCode.EndpointNotFound, missing),
  );
  // The same from a listening env in a third process.
  assert.equal((await other.verify(peer.address, 'Echo')).ok, true);
  const refused = await other.verify(peer.address, 'Nobody');
  assert.deepEqual([refused.ok, refused.code, refused.error], [false, -32001, missing]);
});

test('1,000 sends arrive in the order they were sent, and a send gets nothing back', async (t) => {
  const [peer, env] = await Promise.all([Peer.start(t, { name: 'ordered' }), clientEnv(t)]);
  const ref = await env.setupEndpointRef(peer.address, 'Echo');
  const values = Array.from({ length: 1000 }, (_, i) => String(i));
  for (const value of values) assert.equal(ref.send(TestRecord({ value })), undefined);
  // A send the endpoint cannot handle fails there (onError), not here.
  ref.send(TestUnhandled({}));
  const log = await ref.ask(TestGetLog({}));
  const entries = log.entries as string[];
  assert.deepEqual(
    entries.filter((e) => e.startsWith('record:')),
    values.map((v) => `record:${v} from ${env.address}`),
  );
  assert.equal(entries.at(-1), `onError:Unsupported message TestUnhandled from ${env.address}`);
});

test('an ask resolves to the reply, also when the reply type is given', async (t) => {
  const [peer, env] = await Promise.all([Peer.start(t, { name: 'answers' }), clientEnv(t)]);
  const ref = await env.setupEndpointRef(peer.address, 'Echo');
  assert.deepEqual(await ref.ask(Ping({ seq: 4, payload: 'é€😀' })), {
    type: 'Pong',
    seq: 4,
    payload: 'é€😀',
  });
  const pong = await ref.ask(Ping({ seq: 5 }));
  assert.equal(pong.seq, 5);
  const replies = await Promise.all(
    Array.from({ length: 50 }, (_, i) => ref.ask(Ping({ seq: i }))),
  );
  assert.deepEqual(
    replies.map((r) => r.seq),
    replies.map((_, i) => i),
  );
});

test('a handler that throws fails the ask with its message, reaches onError, and the endpoint serves on', async (t) => {
  const [peer, env] = await Promise.all([Peer.start(t, { name: 'thrower' }), clientEnv(t)]);
  const ref = await env.setupEndpointRef(peer.address, 'Echo');
  await assert.rejects(ref.ask(TestFail({ message: 'boom' })), (err: unknown) => {
    rpcError(RpcErrorCode.HandlerFailed, 'boom')(err);
    assert.equal((err as RpcError & { data?: { errorName?: string } }).data?.errorName, 'Error');
    return true;
  });
  assert.deepEqual(await ref.ask(Ping({ seq: 6 })), Pong({ seq: 6 }));
  await assert.rejects(ref.ask(TestFail({ message: 'again' })), rpcError(-32000, 'again'));
  assert.deepEqual(await ref.ask(Ping({ seq: 7 })), Pong({ seq: 7 }));
  const log = await peer.log('Echo');
  assert.deepEqual(
    log.filter((e) => e.startsWith('onError:')),
    ['onError:boom', 'onError:again'],
  );
});

test('a message with no handler fails with "Unsupported message X from <sender>"', async (t) => {
  const [peer, asker, env] = await Promise.all([
    Peer.start(t, { name: 'picky' }),
    Peer.start(t, { name: 'asker' }),
    clientEnv(t),
  ]);
  const ref = await env.setupEndpointRef(peer.address, 'Echo');
  await assert.rejects(
    ref.ask(TestUnhandled({})),
    rpcError(
      RpcErrorCode.UnsupportedMessage,
      `Unsupported message TestUnhandled from ${env.address}`,
    ),
  );
  const fromPeer = await asker.ask(peer.address, 'Echo', TestUnhandled({}));
  assert.deepEqual(
    [fromPeer.code, fromPeer.error],
    [RpcErrorCode.UnsupportedMessage, `Unsupported message TestUnhandled from ${asker.address}`],
  );
  // An ask to an endpoint that does not exist names it.
  const nobody = env.endpointRef({ address: peer.address, name: 'Nobody' });
  await assert.rejects(
    nobody.ask(Ping({ seq: 8 })),
    rpcError(RpcErrorCode.EndpointNotFound, `Cannot find endpoint: wick://${peer.address}/Nobody`),
  );
  assert.deepEqual(await ref.ask(Ping({ seq: 9 })), Pong({ seq: 9 }));
});
