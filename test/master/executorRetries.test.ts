/**
 * wick.deploy.maxExecutorRetries against a real master and real workers, whose executors are real
 * processes that fail: at once, after starting (RUNNING) without reaching their driver, and in
 * turns on two workers. Each application ends FAILED after the limit, with the count in the
 * master's log, instead of being relaunched for ever (794 launches in 90 s were seen when RUNNING
 * reset the count).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { WickContext } from '../../backend/app/index.js';
import { startMaster, startWorker } from '../helpers/cluster.js';
import { checkNothingLeftRunning } from '../helpers/leaks.js';
import { appDescription, appIn, connectClient, MockApp } from '../helpers/masterMocks.js';

checkNothingLeftRunning();

for (const k of ['WICK_MASTER', 'WICK_SUBMIT_CONF', 'WICK_APP_NAME', 'WICK_APP_DIR'])
  delete process.env[k];

const RETRIES = 3;
const conf = { 'wick.deploy.maxExecutorRetries': RETRIES };

/** A command a worker runs as an executor: Node running `source`. */
const nodeCommand = (source: string) => ({ argv: ['{{WICK_NODE}}', '-e', source], env: {} });

test('executors that exit at once: FAILED after maxExecutorRetries, each failure counted in the log', {
  timeout: 60_000,
}, async (t) => {
  const master = await startMaster(t, { conf });
  const client = await connectClient(t, master.url);
  await startWorker(t, master.url, { cores: 1 });
  const app = await MockApp.start(t, master.url);
  const started = performance.now();
  const appId = await app.register(
    appDescription({ maxCores: 1, command: nodeCommand('process.exit(3)') }),
  );
  const removed = await app.endpoint.next('ApplicationRemoved');
  const ms = performance.now() - started;
  assert.match(
    removed.message as string,
    new RegExp(
      `^FAILED: ${RETRIES} executor failures in a row with none registered with the driver \\(wick\\.deploy\\.maxExecutorRetries = ${RETRIES}\\); the last, executor 2 on 127\\.0\\.0\\.1:\\d+: Command exited with code 3$`,
    ),
  );
  for (let n = 1; n <= RETRIES; n++) {
    assert.match(
      master.stderr,
      new RegExp(`ended before registering with its driver: executor failure ${n} in a row`),
    );
  }
  const s = await client.waitFor((s) => appIn(s, appId)?.state === 'FAILED');
  const a = appIn(s, appId);
  assert.deepEqual(
    a?.removedExecutors.map((e) => [e.id, e.state, e.exitStatus]),
    [
      [0, 'EXITED', 3],
      [1, 'EXITED', 3],
      [2, 'EXITED', 3],
    ],
  );
  assert.equal(a?.lastExecutorFailure?.execId, 2);
  t.diagnostic(`FAILED after ${RETRIES} launches in ${ms.toFixed(0)} ms`);
});

test('executors that start (RUNNING) but cannot reach their driver: the job fails with the reason after maxExecutorRetries', {
  timeout: 60_000,
}, async (t) => {
  const master = await startMaster(t, { conf });
  const client = await connectClient(t, master.url);
  await startWorker(t, master.url, { cores: 1 });
  // The driver listens on 127.0.0.1 but tells its executors 127.0.0.2, where nothing listens.
  const wc = await WickContext.create({
    master: master.url,
    appName: 'unreachable driver',
    conf: { 'wick.driver.host': '127.0.0.2', 'wick.driver.bindAddress': '127.0.0.1' },
  });
  t.after(() => wc.stop());
  const started = performance.now();
  await assert.rejects(wc.parallelize([1, 2], 1).collect(), (err: Error) => {
    assert.match(
      err.message,
      new RegExp(
        `^Master removed our application: FAILED: ${RETRIES} executor failures in a row with none registered with the driver \\(wick\\.deploy\\.maxExecutorRetries = ${RETRIES}\\); the last, executor 2 on 127\\.0\\.0\\.1:\\d+: Command exited with code 1\\nThe end of its stderr:\\n[^]*127\\.0\\.0\\.2[^]*— is wick\\.driver\\.host reachable from the worker hosts\\?`,
      ),
    );
    return true;
  });
  const ms = performance.now() - started;
  const s = await client.waitFor((s) => appIn(s, wc.appId)?.state === 'FAILED');
  const execs = appIn(s, wc.appId)?.removedExecutors ?? [];
  assert.equal(execs.length, RETRIES, 'no executor launched after the limit');
  for (const e of execs) {
    assert.deepEqual(
      e.history.map((h) => h.state),
      ['LAUNCHING', 'RUNNING', 'EXITED'],
      'each started, reported RUNNING, and exited',
    );
  }
  t.diagnostic(`job failed after ${RETRIES} launches in ${ms.toFixed(0)} ms`);
  await wc.stop();
});

test('failures that alternate between two workers, one executor always RUNNING: FAILED after maxExecutorRetries', {
  timeout: 60_000,
}, async (t) => {
  const master = await startMaster(t, { conf: { 'wick.deploy.maxExecutorRetries': 4 } });
  const client = await connectClient(t, master.url);
  const w1 = await startWorker(t, master.url, { cores: 1 });
  const w2 = await startWorker(t, master.url, { cores: 1 });
  await client.waitFor((s) => s.workers.filter((w) => w.state === 'ALIVE').length === 2);
  const app = await MockApp.start(t, master.url);
  // Each lives a little while, so that one runs on a worker while the other's fails.
  const appId = await app.register(
    appDescription({
      maxCores: 2,
      coresPerExecutor: 1,
      command: nodeCommand('setTimeout(() => process.exit(1), 300)'),
    }),
  );
  const removed = await app.endpoint.next('ApplicationRemoved');
  assert.match(removed.message as string, /^FAILED: 4 executor failures in a row/);
  const s = await client.waitFor((s) => appIn(s, appId)?.state === 'FAILED');
  const failed = appIn(s, appId)?.removedExecutors.filter((e) => e.state === 'EXITED') ?? [];
  assert.ok(failed.length >= 4, `${failed.length} failed`);
  assert.deepEqual(
    new Set(failed.map((e) => e.workerId)),
    new Set([w1.workerId, w2.workerId]),
    'on both workers',
  );
  assert.match(master.stderr, /executor failure 4 in a row/);
});
