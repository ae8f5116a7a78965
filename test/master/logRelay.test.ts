/**
 * The master's LogRelay refuses what it cannot or must not relay, each with a message naming the
 * value, against a real master and worker process: a log the master cannot place, a source named
 * two ways, a follower on another env, and one follow more than wick.ui.reverseProxy.maxFollowsPerClient.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LogFollower } from '../../backend/client/LogFollower.js';
import { connectMaster } from '../../backend/client/masterConnection.js';
import { LOG_RELAY_ENDPOINT } from '../../backend/protocol/endpoints.js';
import { FollowLog, RequestLogRange } from '../../backend/protocol/worker.js';
import { checkNothingLeftRunning } from '../helpers/leaks.js';
import {
  runExecutor,
  startLogCluster,
  testClientEnv,
  workerFollows,
} from '../helpers/logCluster.js';
import { waitFor } from '../helpers/processes.js';

checkNothingLeftRunning();

test('the relay says why it will not relay, and bounds the follows of one client', {
  timeout: 60_000,
}, async (t) => {
  const { master, worker } = await startLogCluster(t, {
    conf: { 'wick.ui.reverseProxy.maxFollowsPerClient': 1 },
  });
  const { appId, state } = await runExecutor(
    t,
    master.url,
    "console.log('x'); setInterval(() => {}, 1000)",
  );
  await state('RUNNING');
  const env = await testClientEnv(t);
  const masterRef = await connectMaster(env, master.url);
  const relay = env.endpointRef({ address: masterRef.address, name: LOG_RELAY_ENDPOINT });

  await assert.rejects(
    relay.ask(RequestLogRange({ appId: '../../etc', execId: 0, stream: 'stdout' })),
    /The master cannot relay the log of executor \.\.\/\.\.\/etc\/0: No application \.\.\/\.\.\/etc/,
  );
  await assert.rejects(
    relay.ask(RequestLogRange({ appId, execId: 0, driverId: 'driver-1', stream: 'stdout' })),
    /named by appId and execId \(an executor\) or by driverId \(a driver\), not both/,
  );
  await assert.rejects(
    relay.ask(
      FollowLog({
        appId,
        execId: 0,
        stream: 'stdout',
        offset: 0,
        followId: 'f',
        follower: { address: '127.0.0.1:9', name: 'Elsewhere' },
      }),
    ),
    /Invalid follower "127\.0\.0\.1:9": a follow through the master pushes to an endpoint of the asking RpcEnv/,
  );

  const follower = new LogFollower();
  env.setupEndpoint('RelayTestFollower', follower);
  const chunks: string[] = [];
  const handlers = { chunk: (c: { data: string }) => chunks.push(c.data), ended: () => {} };
  const req = { source: { appId, execId: 0 }, stream: 'stdout' as const, offset: 0 };
  await follower.follow(relay, { ...req, followId: 'one' }, handlers);
  await waitFor('the first chunk', () => chunks.length > 0, t.signal);
  await assert.rejects(
    follower.follow(relay, { ...req, followId: 'two' }, handlers),
    /Too many log follows through the master for client-[\w-]+: 1 are open, and wick\.ui\.reverseProxy\.maxFollowsPerClient is 1; stop one first/,
  );
  assert.equal(await workerFollows(env, worker), 1, 'the refused one never reached the worker');
  // A StopFollowLog through the master stops it on the worker, and frees the client's slot.
  follower.stop('one');
  await waitFor(
    'the worker to stop the follow',
    async () => (await workerFollows(env, worker)) === 0,
    t.signal,
  );
  await follower.follow(relay, { ...req, followId: 'three' }, handlers);
  assert.equal(await workerFollows(env, worker), 1);
  follower.stop('three');
  await waitFor(
    'the worker to stop it too',
    async () => (await workerFollows(env, worker)) === 0,
    t.signal,
  );
});
