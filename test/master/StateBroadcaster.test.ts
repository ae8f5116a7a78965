/**
 * The broadcaster on its own, with refs that record what is sent to them and connections whose
 * backlog the test sets: a subscriber past wick.master.subscriber.maxBacklog is dropped (a client's
 * connection closed, another told), and a change too large for one push goes as several. The
 * real master with a subscriber that never reads is in subscriberBacklog.test.ts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  HEARTBEAT_PUSH_MS,
  HEARTBEATS_PER_PUSH,
  StateBroadcaster,
} from '../../backend/master/StateBroadcaster.js';
import { WorkerInfo } from '../../backend/master/WorkerInfo.js';
import { MASTER_STATE_PAGE_BYTES } from '../../backend/protocol/bounds.js';
import { RpcError, RpcErrorCode } from '../../backend/protocol/errors.js';
import { wickProtocol } from '../../backend/protocol/index.js';
import type { WireMessage } from '../../backend/protocol/registry.js';
import { type RefTransport, RpcEndpointRef } from '../../backend/rpc/RpcEndpointRef.js';
import { captureLog } from '../helpers/rpcAsserts.js';

function setup(maxBacklog = 1000) {
  const sent = new Map<string, WireMessage[]>();
  const backlog = new Map<string, number>();
  const disconnected: { address: string; reason: string }[] = [];
  const transport: RefTransport = {
    send: (ref, message) => {
      const list = sent.get(ref.address) ?? [];
      list.push(message);
      sent.set(ref.address, list);
    },
    ask: () => assert.fail('the broadcaster asks nothing'),
    flush: () => {},
    protocol: wickProtocol,
  };
  const broadcaster = new StateBroadcaster({
    maxBacklog,
    links: {
      backlog: (ref) => backlog.get(ref.address) ?? 0,
      isClientOnly: (address) => address.startsWith('client-'),
      disconnect: (ref, reason) => disconnected.push({ address: ref.address, reason }),
    },
  });
  const ref = (address: string) => new RpcEndpointRef(address, 'Mirror', transport);
  return { broadcaster, sent, backlog, disconnected, ref };
}

const worker = (i: number, webUiAddress = '') =>
  new WorkerInfo(
    `worker-${i}`,
    '127.0.0.1',
    1000 + i,
    4,
    4096,
    new RpcEndpointRef(`127.0.0.1:${1000 + i}`, 'Worker', {} as RefTransport),
    webUiAddress,
    0,
  );

test('a subscriber whose connection has more than maxBacklog unsent is dropped; the others go on', () => {
  const { broadcaster, sent, backlog, disconnected, ref } = setup(1000);
  broadcaster.subscribe(ref('client-slow'));
  broadcaster.subscribe(ref('127.0.0.1:5000'));
  broadcaster.subscribe(ref('client-fine'));
  broadcaster.worker(worker(1));
  broadcaster.flush();
  assert.equal(sent.get('client-slow')?.length, 1);

  backlog.set('client-slow', 1001);
  backlog.set('127.0.0.1:5000', 5000);
  backlog.set('client-fine', 1000);
  broadcaster.worker(worker(2));
  broadcaster.flush();
  // The client's connection is closed, naming how far behind it was and the setting.
  assert.equal(disconnected.length, 1);
  assert.equal(disconnected[0]?.address, 'client-slow');
  assert.match(disconnected[0]?.reason ?? '', /wick\.master\.subscriber\.maxBacklog/);
  assert.equal(sent.get('client-slow')?.length, 1, 'nothing more queued for it');
  // The other connection stays: its subscriber is told, and sent no more changes.
  const told = sent.get('127.0.0.1:5000') ?? [];
  assert.deepEqual(
    told.map((m) => m.type),
    ['MasterStateEvent', 'MasterStateSubscriptionDropped'],
  );
  assert.match(String(told[1]?.reason), /unread/);
  // At the limit is not past it.
  assert.deepEqual(
    sent.get('client-fine')?.map((m) => m.type),
    ['MasterStateEvent', 'MasterStateEvent'],
  );
  assert.equal(broadcaster.subscriberCount, 1);

  broadcaster.worker(worker(3));
  broadcaster.flush();
  assert.equal(sent.get('client-slow')?.length, 1);
  assert.equal(sent.get('127.0.0.1:5000')?.length, 2);
  assert.equal(sent.get('client-fine')?.length, 3);
  assert.equal(disconnected.length, 1, 'dropped once');
});

test('a change of more than a page goes as several events, numbered in order, nothing lost', () => {
  const { broadcaster, sent, ref } = setup(Number.MAX_SAFE_INTEGER);
  broadcaster.subscribe(ref('client-a'));
  // 300 workers of about 20 KB each: about 6 MB, more than a page of 4 MiB.
  const big = 'x'.repeat(20_000);
  for (let i = 0; i < 300; i++) broadcaster.worker(worker(i, big));
  broadcaster.workerRemoved('worker-gone');
  broadcaster.statusChanged('ALIVE');
  broadcaster.flush();
  const events = (sent.get('client-a') ?? []) as (WireMessage & {
    seq: number;
    workers?: { id: string }[];
    removedWorkers?: string[];
    status?: string;
  })[];
  assert.ok(events.length >= 2, `${events.length} events`);
  assert.deepEqual(
    events.map((e) => e.seq),
    events.map((_, i) => i + 1),
  );
  for (const e of events) {
    assert.ok(JSON.stringify(e).length < MASTER_STATE_PAGE_BYTES + 30_000);
  }
  assert.deepEqual(
    events.flatMap((e) => e.workers ?? []).map((w) => w.id),
    Array.from({ length: 300 }, (_, i) => `worker-${i}`),
  );
  assert.equal(events[0]?.status, 'ALIVE');
  assert.deepEqual(events.at(-1)?.removedWorkers, ['worker-gone']);
  assert.equal(broadcaster.seq, events.length);
});

test('a small change is one event', () => {
  const { broadcaster, sent, ref } = setup();
  broadcaster.subscribe(ref('client-a'));
  for (let i = 0; i < 10; i++) broadcaster.worker(worker(i));
  broadcaster.flush();
  assert.equal(sent.get('client-a')?.length, 1);
});

type WorkerEvent = WireMessage & {
  workers?: { id: string; lastHeartbeat: number }[];
  removedWorkers?: string[];
};

test('heartbeats do not push on their own at once: they ride with the next change', async () => {
  const { broadcaster, sent, ref } = setup(Number.MAX_SAFE_INTEGER);
  broadcaster.subscribe(ref('client-a'));
  const beating = Array.from({ length: 100 }, (_, i) => worker(i));
  for (const w of beating) {
    w.lastHeartbeat = 1000 + w.port;
    broadcaster.workerHeartbeat(w);
  }
  // A change goes out once its message is handled (a microtask); the heartbeats did not ask for
  // one: a turn of the event loop later nothing is sent...
  await new Promise((r) => setImmediate(r));
  assert.equal(sent.get('client-a'), undefined, 'a heartbeat pushed on its own');
  // ...until a change does, and carries them, each worker once, with its new time.
  broadcaster.worker(worker(200));
  broadcaster.workerHeartbeat(worker(200));
  await new Promise((r) => setImmediate(r));
  const events = (sent.get('client-a') ?? []) as WorkerEvent[];
  assert.equal(events.length, 1);
  const pushed = events[0]?.workers ?? [];
  assert.deepEqual(
    pushed.map((w) => w.id).sort(),
    [...beating.map((w) => w.id), 'worker-200'].sort(),
  );
  for (const w of beating) {
    assert.equal(pushed.find((p) => p.id === w.id)?.lastHeartbeat, w.lastHeartbeat);
  }
});

test("a heartbeat alone goes out within HEARTBEAT_PUSH_MS; a removed worker's does not", async () => {
  const { broadcaster, sent, ref } = setup(Number.MAX_SAFE_INTEGER);
  broadcaster.subscribe(ref('client-a'));
  const w = worker(1);
  const gone = worker(2);
  broadcaster.workerHeartbeat(w);
  broadcaster.workerHeartbeat(gone);
  broadcaster.workerRemoved(gone.id);
  // The removal goes out at once, with the one heartbeat still due.
  await new Promise((r) => setImmediate(r));
  const first = (sent.get('client-a') ?? []) as WorkerEvent[];
  assert.deepEqual(
    first.map((e) => [e.workers?.map((x) => x.id), e.removedWorkers]),
    [[['worker-1'], ['worker-2']]],
  );
  // Then a heartbeat with nothing else to carry it.
  w.lastHeartbeat = 4242;
  broadcaster.workerHeartbeat(w);
  const started = Date.now();
  while ((sent.get('client-a')?.length ?? 0) < 2) {
    assert.ok(Date.now() - started < 10 * HEARTBEAT_PUSH_MS, 'the heartbeat never went out');
    await new Promise((r) => setTimeout(r, 20));
  }
  const events = (sent.get('client-a') ?? []) as WorkerEvent[];
  assert.deepEqual(
    events.slice(1).map((e) => [e.workers?.map((x) => [x.id, x.lastHeartbeat]), e.removedWorkers]),
    [[[['worker-1', 4242]], undefined]],
  );
});

test('stopped, it sends what was marked, then nothing: no push is left due after the RpcEnv stops', () => {
  const { broadcaster, sent, ref } = setup(Number.MAX_SAFE_INTEGER);
  broadcaster.subscribe(ref('client-a'));
  broadcaster.workerHeartbeat(worker(1));
  broadcaster.stop();
  assert.deepEqual(
    ((sent.get('client-a') ?? []) as WorkerEvent[]).map((e) => e.workers?.map((w) => w.id)),
    [['worker-1']],
  );
  // A heartbeat or a change handled while the master stops marks nothing and arms no timer.
  broadcaster.workerHeartbeat(worker(2));
  broadcaster.worker(worker(3));
  broadcaster.flush();
  assert.equal(sent.get('client-a')?.length, 1);
});

test('many heartbeats go HEARTBEATS_PER_PUSH at a time, the rest turns of the event loop later', async () => {
  const { broadcaster, sent, ref } = setup(Number.MAX_SAFE_INTEGER);
  broadcaster.subscribe(ref('client-a'));
  const beating = Array.from({ length: 2 * HEARTBEATS_PER_PUSH + 500 }, (_, i) => worker(i));
  for (const w of beating) broadcaster.workerHeartbeat(w);
  broadcaster.worker(worker(-1));
  const started = Date.now();
  const pushed = () =>
    ((sent.get('client-a') ?? []) as WorkerEvent[]).flatMap((e) => e.workers ?? []);
  while (pushed().length < beating.length + 1) {
    assert.ok(Date.now() - started < 10_000, `${pushed().length} pushed`);
    await new Promise((r) => setTimeout(r, 5));
  }
  const events = (sent.get('client-a') ?? []) as WorkerEvent[];
  // The change goes at once with the first heartbeats; no push carries more than its share.
  assert.equal(events[0]?.workers?.[0]?.id, 'worker--1');
  assert.deepEqual(
    events.map((e) => e.workers?.length),
    [HEARTBEATS_PER_PUSH + 1, HEARTBEATS_PER_PUSH, 500],
  );
  assert.deepEqual(
    pushed()
      .map((w) => w.id)
      .sort(),
    ['worker--1', ...beating.map((w) => w.id)].sort(),
  );
});

test("a push that fails because the master's RpcEnv stopped is no warning; any other failure is", (t) => {
  const lines = captureLog(t);
  const failing = (err: Error): RefTransport => ({
    send: () => {
      throw err;
    },
    ask: () => assert.fail('the broadcaster asks nothing'),
    flush: () => {},
    protocol: wickProtocol,
  });
  const broadcaster = new StateBroadcaster();
  broadcaster.subscribe(
    new RpcEndpointRef(
      'client-stopped',
      'Mirror',
      failing(new RpcError(RpcErrorCode.RpcEnvStopped, 'RpcEnv stopped')),
    ),
  );
  broadcaster.worker(worker(1));
  broadcaster.flush();
  broadcaster.subscribe(new RpcEndpointRef('client-broken', 'Mirror', failing(new Error('boom'))));
  broadcaster.worker(worker(2));
  broadcaster.flush();
  const warnings = lines.filter((l) => l.includes('WARN'));
  assert.equal(warnings.length, 1, warnings.join('\n'));
  assert.match(warnings[0] ?? '', /Could not push state to .*client-broken.*boom/s);
});
