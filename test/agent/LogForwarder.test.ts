/**
 * The agent's LogForwarder against a mock Worker endpoint in another RpcEnv over loopback: the
 * chunks the worker pushes reach the agent's sink in order, as the same base64 the worker sent
 * (the agent passes it on to the extension without decoding and re-encoding it), then the end.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import type { AgentSink } from '../../backend/agent/Agent.js';
import { LogForwarder } from '../../backend/agent/LogForwarder.js';
import { WORKER_ENDPOINT } from '../../backend/protocol/endpoints.js';
import { FollowLog, LogFollowEnded, LogFollowStarted } from '../../backend/protocol/worker.js';
import { RpcEndpoint, RpcEnv } from '../../backend/rpc/index.js';
import { testProtocol } from '../helpers/protocol.js';

/** Answers FollowLog, then pushes `chunks` to the follower as the real Worker does. */
class MockWorker extends RpcEndpoint {
  constructor(chunks: Buffer[]) {
    super();
    this.on(FollowLog, (m, ctx) => {
      const follower = this.rpcEnv.endpointRef(m.follower);
      ctx.reply(LogFollowStarted({ followId: m.followId, totalSize: 0 }));
      let offset = m.offset;
      for (const data of chunks) {
        const chunk = { type: 'LogChunk', followId: m.followId, offset };
        this.rpcEnv.sendWithBytes(follower, chunk, 'data', data);
        offset += data.length;
      }
      follower.send(
        LogFollowEnded({ followId: m.followId, totalSize: offset, reason: 'process exited' }),
      );
      return undefined;
    });
  }
}

test('chunks reach the sink in order, as the base64 the worker sent, then the end', async (t) => {
  const chunks = [
    randomBytes(10),
    randomBytes(2 * 1024 * 1024),
    randomBytes(1),
    randomBytes(70_000),
  ];
  const workerEnv = await RpcEnv.create({ protocol: testProtocol, name: 'mockWorker', port: 0 });
  t.after(() => workerEnv.stop());
  workerEnv.setupEndpoint(WORKER_ENDPOINT, new MockWorker(chunks));
  const agentEnv = await RpcEnv.create({ protocol: testProtocol, name: 'agent', clientMode: true });
  t.after(() => agentEnv.stop());

  const got: { offset: number; base64: string }[] = [];
  let ended: ((e: { totalSize: number; reason: string }) => void) | undefined;
  const end = new Promise<{ totalSize: number; reason: string }>((r) => {
    ended = r;
  });
  const sink: AgentSink = {
    stateChanged: () => {},
    submitProgress: () => {},
    logChunk: (followId, offset, base64) => {
      assert.equal(followId, 'f1');
      got.push({ offset, base64 });
    },
    logFollowEnded: (_id, totalSize, reason) => ended?.({ totalSize, reason }),
    driverOutput: () => {},
    driverExited: () => {},
    log: () => {},
  };
  const forwarder = new LogForwarder(sink);
  agentEnv.setupEndpoint('LogForwarder', forwarder);
  const worker = await agentEnv.setupEndpointRef(workerEnv.address, WORKER_ENDPOINT);
  await forwarder.forward(worker, {
    followId: 'f1',
    source: { appId: 'app-20261130120000-0001', execId: 0 },
    stream: 'stdout',
    offset: 5,
  });
  const total = chunks.reduce((n, c) => n + c.length, 0);
  assert.deepEqual(await end, { totalSize: 5 + total, reason: 'process exited' });

  let offset = 5;
  assert.equal(got.length, chunks.length);
  for (const [i, c] of chunks.entries()) {
    assert.equal(got[i]?.offset, offset);
    assert.equal(got[i]?.base64, c.toString('base64'), `chunk ${i}`);
    offset += c.length;
  }
});
