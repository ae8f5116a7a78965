/**
 * RpcEnv.stop() with peers in other processes: every endpoint gets onStop, asks still pending
 * (to local endpoints and to remote ones) fail with "RpcEnv stopped", asks that arrive or are made
 * while it stops are refused, awaitTermination() resolves, and peers see the env go.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Ping, Pong } from '../../backend/protocol/rpc.js';
import { RpcEndpoint, RpcEnv, RpcError, RpcErrorCode } from '../../backend/rpc/index.js';
import { RecordingEndpoint } from '../fixtures/RecordingEndpoint.js';
import { TestNoReply, TestRecord, TestSleep } from '../fixtures/testMessages.js';
import { checkNothingLeftRunning } from '../helpers/leaks.js';
import { Peer } from '../helpers/peer.js';
import { testProtocol } from '../helpers/protocol.js';

checkNothingLeftRunning();

/** An endpoint whose onStop waits until the test opens the gate, holding the env mid-stop. */
class GatedStop extends RpcEndpoint {
  stopped = false;
  private open!: () => void;
  private readonly gate = new Promise<void>((r) => {
    this.open = r;
  });

  release(): void {
    this.open();
  }

  override async onStop(): Promise<void> {
    await this.gate;
    this.stopped = true;
  }
}

/** Answers each ask by asking a remote endpoint that never answers: its handler stays busy. */
class Relay extends RpcEndpoint {
  constructor(private readonly target: { address: string; name: string }) {
    super();
    this.on(Ping, async ({ seq }) => {
      await this.rpcEnv.endpointRef(this.target).ask(TestNoReply({}), { timeout: 60_000 });
      return Pong({ seq });
    });
  }
}

function isStoppedError(err: unknown): boolean {
  assert.ok(err instanceof RpcError, String(err));
  assert.equal(err.code, RpcErrorCode.RpcEnvStopped, err.message);
  assert.match(err.message, /^RpcEnv stopped/);
  return true;
}

test('stop() runs every onStop, fails pending asks, refuses new ones, and terminates', async (t) => {
  const [peer, env] = await Promise.all([
    Peer.start(t, { name: 'witness', endpoints: ['Echo', 'Other'] }),
    RpcEnv.create({ protocol: testProtocol, name: 'stopping', port: 0 }),
  ]);
  const a = new RecordingEndpoint();
  const gated = new GatedStop();
  t.after(() => {
    gated.release();
    return env.stop();
  });
  const aRef = env.setupEndpoint('A', a);
  env.setupEndpoint('Gated', gated);

  // A remote ask in flight: the peer's Echo sleeps on it.
  const remote = env.endpointRef({ address: peer.address, name: 'Echo' });
  const remotePending = remote.ask(TestSleep({ ms: 10_000 }), { timeout: 60_000 });
  const other = env.endpointRef({ address: peer.address, name: 'Other' });
  assert.deepEqual(await other.ask(Ping({ seq: 1 })), Pong({ seq: 1 }));
  // A local ask A accepted and will never answer.
  const localPending = aRef.ask(TestNoReply({}), { timeout: 60_000 });
  assert.equal((await aRef.ask(Ping({ seq: 2 }))).seq, 2);
  // The peer's ask to A, equally unanswered.
  const peerPending = peer.ask(env.address, 'A', TestNoReply({}), 60_000);
  assert.equal((await peer.ask(env.address, 'A', Ping({ seq: 3 }))).ok, true);
  const failures = [
    assert.rejects(remotePending, isStoppedError),
    assert.rejects(localPending, isStoppedError),
  ];

  const stopping = env.stop();
  assert.equal(env.isStopped, true);
  // While Gated's onStop holds the env mid-stop: nothing new is accepted, from here or outside.
  await assert.rejects(aRef.ask(Ping({ seq: 4 })), isStoppedError);
  await assert.rejects(remote.ask(Ping({ seq: 5 })), isStoppedError);
  assert.throws(() => remote.send(TestRecord({ value: 'late' })), isStoppedError);
  assert.throws(() => env.setupEndpoint('Late', new RecordingEndpoint()), isStoppedError);
  const refused = await peer.ask(env.address, 'A', Ping({ seq: 6 }));
  assert.deepEqual([refused.ok, refused.code], [false, RpcErrorCode.RpcEnvStopped]);
  assert.match(refused.error ?? '', /^RpcEnv stopped/);

  gated.release();
  await stopping;
  await env.awaitTermination();
  await Promise.all(failures);
  assert.equal(gated.stopped, true);
  assert.equal(a.entries.at(-1), 'onStop');
  assert.equal(a.entries.filter((e) => e === 'onStop').length, 1);
  await assert.rejects(aRef.ask(Ping({ seq: 7 })), isStoppedError);
  await env.stop(); // a second stop is harmless

  // The peer's pending ask ends when the connection does; the peer sees the env go and its
  // port closed.
  const ended = await peerPending;
  assert.equal(ended.ok, false);
  assert.ok(
    ended.code === RpcErrorCode.ConnectionClosed || ended.code === RpcErrorCode.RpcEnvStopped,
    JSON.stringify(ended),
  );
  await peer.waitForLog(t, 'Other', (l) => l.includes(`onDisconnected:${env.address}`));
  const gone = await peer.ask(env.address, 'A', Ping({ seq: 8 }));
  assert.equal(gone.code, RpcErrorCode.ConnectFailed);
  assert.equal(gone.error, `Failed to connect to wick://${env.address}: connection refused`);
});

test('a peer process that stops fails its own pending asks and its endpoints get onStop', async (t) => {
  const [stopping, remote] = await Promise.all([
    Peer.start(t, { name: 'stopping', endpoints: ['Echo', 'Other'] }),
    Peer.start(t, { name: 'remote', endpoints: ['Echo', 'Other'] }),
  ]);
  const remoteAsk = stopping.ask(remote.address, 'Echo', TestSleep({ ms: 10_000 }), 60_000);
  assert.equal((await stopping.ask(remote.address, 'Other', Ping({ seq: 1 }))).ok, true);
  const localAsk = stopping.ask(stopping.address, 'Echo', TestNoReply({}), 60_000);
  assert.equal((await stopping.ask(stopping.address, 'Echo', Ping({ seq: 2 }))).ok, true);

  const entries = await stopping.stop();
  assert.equal(await stopping.exited, 0);
  for (const ask of [await remoteAsk, await localAsk]) {
    assert.deepEqual(
      [ask.ok, ask.code, ask.error],
      [false, RpcErrorCode.RpcEnvStopped, 'RpcEnv stopped'],
    );
  }
  assert.equal(entries.filter((e) => e === 'onStop').length, 2, JSON.stringify(entries));
  await remote.waitForLog(t, 'Other', (l) => l.includes(`onDisconnected:${stopping.address}`));
});

test('stop() does not wait for a handler that is itself waiting on a remote ask', {
  timeout: 30_000,
}, async (t) => {
  const [peer, env] = await Promise.all([
    Peer.start(t, { name: 'silent' }),
    RpcEnv.create({ protocol: testProtocol, name: 'relaying', clientMode: true }),
  ]);
  t.after(() => env.stop());
  const relay = new RecordingEndpoint();
  env.setupEndpoint('Log', relay);
  const ref = env.setupEndpoint('Relay', new Relay({ address: peer.address, name: 'Echo' }));
  const pending = ref.ask(Ping({ seq: 1 }), { timeout: 60_000 });
  const failed = assert.rejects(pending, isStoppedError);
  // The relay's own ask has reached the peer once the peer has recorded it.
  await peer.waitForLog(t, 'Echo', (l) => l.includes(`noReply from ${env.address}`));
  // The relay's ask fails with the stop, so its handler ends and onStop can run.
  await env.stop();
  await failed;
  assert.equal(relay.entries.at(-1), 'onStop');
});
