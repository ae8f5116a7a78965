/**
 * The one log follower of every client, against a mock Worker in an RpcEnv on port 0: chunks
 * reach their follow's handlers in order, a follow ends once however it ends (the worker's
 * end, stop(), the worker's connection dropping), and a refused follow leaves nothing behind.
 */
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { type FollowHandlers, LogFollower } from '../../backend/client/LogFollower.js';
import { bytesOf } from '../../backend/protocol/base64.js';
import { WORKER_ENDPOINT } from '../../backend/protocol/endpoints.js';
import type { MessageOf } from '../../backend/protocol/registry.js';
import {
  FollowLog,
  LogChunk,
  LogFollowEnded,
  LogFollowStarted,
  StopFollowLog,
} from '../../backend/protocol/worker.js';
import {
  RpcEndpoint,
  type RpcEndpointRef,
  RpcEnv,
  RpcError,
  RpcErrorCode,
} from '../../backend/rpc/index.js';
import { testProtocol } from '../helpers/protocol.js';
import { within } from '../helpers/within.js';

class MockWorker extends RpcEndpoint {
  readonly follows = new Map<string, MessageOf<typeof FollowLog>>();
  readonly stopped: string[] = [];
  onStopped: () => void = () => {};

  constructor() {
    super();
    this.on(FollowLog, (m) => {
      if (m.driverId === 'driver-none') {
        throw new RpcError(RpcErrorCode.InvalidParams, 'No such log: driver-none/stdout');
      }
      this.follows.set(m.followId, m);
      return LogFollowStarted({ followId: m.followId, totalSize: m.offset });
    });
    this.on(StopFollowLog, (m) => {
      this.stopped.push(m.followId);
      this.onStopped();
    });
  }

  private follower(followId: string): RpcEndpointRef {
    const f = this.follows.get(followId);
    assert.ok(f, `no follow ${followId}`);
    return this.rpcEnv.endpointRef(f.follower);
  }

  chunk(followId: string, offset: number, text: string): void {
    const data = Buffer.from(text).toString('base64');
    this.follower(followId).send(LogChunk({ followId, offset, data }));
  }

  end(followId: string, totalSize: number): void {
    this.follower(followId).send(LogFollowEnded({ followId, totalSize, reason: 'process exited' }));
  }
}

async function setup(t: TestContext) {
  const workerEnv = await RpcEnv.create({ protocol: testProtocol, name: 'mockWorker', port: 0 });
  t.after(() => workerEnv.stop());
  const worker = new MockWorker();
  workerEnv.setupEndpoint(WORKER_ENDPOINT, worker);
  const env = await RpcEnv.create({ protocol: testProtocol, name: 'client', clientMode: true });
  t.after(() => env.stop());
  const follower = new LogFollower();
  env.setupEndpoint('Logs', follower);
  const ref = await env.setupEndpointRef(workerEnv.address, WORKER_ENDPOINT);
  return { workerEnv, worker, env, follower, ref };
}

/** Handlers that record, and a promise of the end. */
function recorder() {
  const chunks: string[] = [];
  let ended!: (e: { totalSize: number; reason: string }) => void;
  const end = new Promise<{ totalSize: number; reason: string }>((r) => {
    ended = r;
  });
  let ends = 0;
  const handlers: FollowHandlers = {
    chunk: (c) => chunks.push(`${c.offset}:${bytesOf(c, 'data').toString()}`),
    ended: (totalSize, reason) => {
      ends++;
      ended({ totalSize, reason });
    },
  };
  return { chunks, end, handlers, ends: () => ends };
}

test('chunks reach their follow in order, then its end, once', async (t) => {
  const { worker, follower, ref } = await setup(t);
  const a = recorder();
  const b = recorder();
  const fa = await follower.follow(
    ref,
    { source: { appId: 'app-1', execId: 0 }, stream: 'stdout', offset: 3 },
    a.handlers,
  );
  const fb = await follower.follow(
    ref,
    { source: { driverId: 'driver-1' }, stream: 'stderr', offset: 0, followId: 'mine' },
    b.handlers,
  );
  assert.equal(fb.followId, 'mine');
  assert.equal(fa.totalSize, 3);
  const asked = worker.follows.get(fa.followId);
  assert.deepEqual([asked?.appId, asked?.execId, asked?.stream], ['app-1', 0, 'stdout']);
  assert.equal(worker.follows.get('mine')?.driverId, 'driver-1');
  worker.chunk(fa.followId, 3, 'one');
  worker.chunk('mine', 0, 'other');
  worker.chunk(fa.followId, 6, 'two');
  worker.end(fa.followId, 9);
  worker.end(fa.followId, 9);
  assert.deepEqual(await within(5000, a.end, 'the end'), {
    totalSize: 9,
    reason: 'process exited',
  });
  assert.deepEqual(a.chunks, ['3:one', '6:two']);
  worker.end('mine', 5);
  await within(5000, b.end, 'the second end');
  assert.deepEqual(b.chunks, ['0:other']);
  assert.equal(a.ends(), 1, 'a follow ends once');
});

test('stop() tells the worker, and the follow hears nothing more', async (t) => {
  const { worker, follower, ref } = await setup(t);
  const r = recorder();
  const { followId } = await follower.follow(
    ref,
    { source: { driverId: 'driver-1' }, stream: 'stdout', offset: 0 },
    r.handlers,
  );
  const stopped = new Promise<void>((done) => {
    worker.onStopped = done;
  });
  follower.stop(followId);
  await within(5000, stopped, 'StopFollowLog at the worker');
  assert.deepEqual(worker.stopped, [followId]);
  worker.chunk(followId, 0, 'late');
  worker.end(followId, 4);
  // A follow of another log, after the late messages, shows they were dropped, not delayed.
  const next = recorder();
  const second = await follower.follow(
    ref,
    { source: { driverId: 'driver-1' }, stream: 'stdout', offset: 0 },
    next.handlers,
  );
  worker.end(second.followId, 0);
  await within(5000, next.end, 'the second follow ends');
  assert.deepEqual(r.chunks, []);
  assert.equal(r.ends(), 0);
});

test("a follow ends when the worker's connection drops, saying which worker went", async (t) => {
  const { workerEnv, follower, ref } = await setup(t);
  const r = recorder();
  await follower.follow(
    ref,
    { source: { appId: 'app-1', execId: 2 }, stream: 'stdout', offset: 0 },
    r.handlers,
  );
  await workerEnv.stop();
  assert.deepEqual(await within(5000, r.end, 'the end'), {
    totalSize: -1,
    reason: `The worker at ${ref.address} went away`,
  });
});

test("a refused follow rejects with the worker's message and keeps no handlers", async (t) => {
  const { follower, ref, env } = await setup(t);
  const r = recorder();
  await assert.rejects(
    follower.follow(
      ref,
      { source: { driverId: 'driver-none' }, stream: 'stdout', offset: 0 },
      r.handlers,
    ),
    /No such log: driver-none\/stdout/,
  );
  await env.stopEndpoint(follower.self);
  assert.equal(r.ends(), 0, 'stopping the follower ends no follow: there was none');
});

test('the follows still open end when the follower stops', async (t) => {
  const { follower, ref, env } = await setup(t);
  const r = recorder();
  await follower.follow(
    ref,
    { source: { driverId: 'driver-1' }, stream: 'stdout', offset: 0 },
    r.handlers,
  );
  await env.stopEndpoint(follower.self);
  assert.deepEqual(await r.end, { totalSize: -1, reason: 'The client stopped' });
});
