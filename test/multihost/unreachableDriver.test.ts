/**
 * A driver whose executors cannot reach it: told to advertise 127.0.0.1 while its executors run
 * on another host, each executor fails to connect and exits. The driver's log and `wick status`
 * must say so, quoting the executor's own stderr and pointing at wick.driver.host.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hostsUnavailable, startHosts } from '../helpers/hosts.js';
import { waitFor } from '../helpers/processes.js';

const HINT = '— is wick.driver.host reachable from the worker hosts?';

test('executors that cannot reach their driver are explained in its log and in wick status', {
  skip: hostsUnavailable(),
  timeout: 120_000,
}, async (t) => {
  const net = await startHosts(t, ['master', 'w1', 'user']);
  await net.host('master').startMaster();
  const url = `wick://${net.host('master').address}:7077`;
  await net.host('w1').startWorker(url, { cores: 1 });
  const user = net.host('user');

  // Loopback on the user's host: on w1 it is w1's own loopback, where nothing listens.
  const driver = user.startWick([
    'submit',
    '--master',
    url,
    '--conf',
    'wick.driver.host=127.0.0.1',
    'examples/pi.ts',
  ]);
  const appId = (await driver.waitForStderr(/app ID (app-\S+)/))[1] as string;
  const warning = await driver.waitForStderr(
    /WARN .*Executor (\d+) exited before registering with the driver: Command exited with code 1\nThe end of its stderr:\n[\s\S]*Cannot register with driver: wick:\/\/127\.0\.0\.1:\d+\/CoarseGrainedScheduler: Failed to connect to wick:\/\/127\.0\.0\.1:\d+: connection refused — is wick\.driver\.host reachable from the worker hosts\?/,
  );
  // The quote is the executor's own log line, from its stderr file on w1.
  assert.match(warning[0], /ERROR CoarseGrainedExecutorBackend: Cannot register/);

  const status = await waitFor(
    'wick status to show the failure',
    async () => {
      const r = await user.wick(['status', '--master', url, appId]);
      return r.stdout.includes(HINT) ? r : undefined;
    },
    t.signal,
  );
  assert.match(status.stdout, /last executor failure: executor \d+ on 10\.[\d.]+:\d+ at /);
  assert.match(
    status.stdout,
    /^ {4}.*Failed to connect to wick:\/\/127\.0\.0\.1:\d+: connection refused — is wick\.driver\.host/m,
  );
  // Each executor's own line stays short: the quote is kept once, on the application.
  assert.match(
    status.stdout,
    /executor \d+ on [\d.:]+: EXITED \(exit 1\) Command exited with code 1$/m,
  );

  const json = JSON.parse((await user.wick(['status', '--json', '--master', url, appId])).stdout);
  if (json.state === 'WAITING' || json.state === 'RUNNING') {
    const kill = await user.wick(['kill', '--master', url, appId]);
    assert.equal(kill.code, 0, kill.stderr);
  }
  const { code } = await driver.closed;
  assert.notEqual(code, 0, 'a driver whose application was killed or failed exits non-zero');
});
