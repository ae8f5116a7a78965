/**
 * LogRouter's choice, against a real master and worker process: the worker when it answers, the
 * master's relay when it cannot be reached from here (an address nobody can dial, TEST-NET-1's
 * 192.0.2.1, or a port nothing listens on) — and reading through that relay works, because the
 * master places the log with its own tables and talks to the worker over the connection the
 * worker opened — and the relay always with wick.ui.reverseProxy, without trying the worker.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LogRouter } from '../../backend/client/LogRouter.js';
import { connectMaster, masterState } from '../../backend/client/masterConnection.js';
import { bytesOf } from '../../backend/protocol/base64.js';
import { RequestLogRange } from '../../backend/protocol/worker.js';
import { checkNothingLeftRunning } from '../helpers/leaks.js';
import { runExecutor, startLogCluster, testClientEnv } from '../helpers/logCluster.js';
import { unusedPort } from '../helpers/net.js';

checkNothingLeftRunning();

test('the worker when it answers, else the master, which serves the same log', {
  timeout: 60_000,
}, async (t) => {
  const { master, worker } = await startLogCluster(t);
  const { appId, state } = await runExecutor(t, master.url, "console.log('via either')");
  await state('EXITED');
  const env = await testClientEnv(t);
  const masterRef = await connectMaster(env, master.url);
  const real = await masterState(masterRef);
  const source = { appId, execId: 0 };
  const read = async (ref: Awaited<ReturnType<LogRouter['route']>>['ref']) =>
    bytesOf(
      await ref.ask(RequestLogRange({ appId, execId: 0, stream: 'stdout' })),
      'data',
    ).toString();

  const direct = await new LogRouter(env, {
    reverseProxy: false,
    workerConnectTimeoutMs: 2000,
  }).route(real, source, masterRef);
  assert.equal(direct.via, 'worker');
  assert.equal(direct.ref.address, worker.address);
  assert.equal(direct.reason, undefined);
  assert.equal(await read(direct.ref), 'via either\n');

  // The state as a client behind a tunnel would see it: the worker at an address it cannot dial.
  const [, port] = worker.address.split(':');
  const withWorkerAt = (host: string, p = Number(port)) => ({
    ...real,
    workers: real.workers.map((w) => (w.id === worker.workerId ? { ...w, host, port: p } : w)),
  });
  const started = Date.now();
  const router = new LogRouter(env, { reverseProxy: false, workerConnectTimeoutMs: 300 });
  const relayed = await router.route(withWorkerAt('192.0.2.1'), source, masterRef);
  assert.equal(relayed.via, 'master');
  assert.equal(relayed.ref.address, masterRef.address);
  assert.match(
    relayed.reason ?? '',
    new RegExp(`worker ${worker.workerId} at 192\\.0\\.2\\.1:${port} cannot be reached from here`),
  );
  assert.ok(Date.now() - started < 5000, 'the connect timeout bounds the wait');
  assert.equal(await read(relayed.ref), 'via either\n');
  // Remembered: a second log of that worker does not wait again.
  const again = Date.now();
  assert.equal((await router.route(withWorkerAt('192.0.2.1'), source, masterRef)).via, 'master');
  assert.ok(Date.now() - again < 100);

  const refused = await router.route(
    withWorkerAt('127.0.0.1', await unusedPort()),
    source,
    masterRef,
  );
  assert.equal(refused.via, 'master');
  assert.match(refused.reason ?? '', /connection refused/);

  const forced = await new LogRouter(env, {
    reverseProxy: true,
    workerConnectTimeoutMs: 300,
  }).route(real, source, masterRef);
  assert.deepEqual([forced.via, forced.reason], ['master', 'wick.ui.reverseProxy is on']);
  assert.equal(await read(forced.ref), 'via either\n');
});
