/**
 * The Python example across hosts: pi_driver.py on the user's host, its executors (executor.py)
 * launched by workers on two other hosts, with no address given: the driver listens on its
 * address on the route to the master, which the executors reach. Authenticated as an operator
 * would: the master generates the cluster secret on its host and prints the line that joins a
 * worker; the workers and the driver get the secret from it, the executors only their
 * application's key.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { repoRoot } from '../helpers/cli.js';
import { hostsUnavailable, startHosts } from '../helpers/hosts.js';

test('the Python driver and executors run SparkPi across hosts with no address given', {
  skip: hostsUnavailable(),
  timeout: 120_000,
}, async (t) => {
  const net = await startHosts(t, ['master', 'w1', 'w2', 'user']);
  // Without the harness's secret: the master makes its own, as on a fresh machine.
  const master = await net.host('master').startMaster({ env: { WICK_AUTH_SECRET: '' } });
  const [, secret] = await master.waitForStderr(/^ {4}WICK_AUTH_SECRET=(\S+) wick worker /m);
  const env = { WICK_AUTH_SECRET: secret as string };
  await net.host('w1').startWorker(master.url, { cores: 1, env });
  await net.host('w2').startWorker(master.url, { cores: 1, env });
  const user = net.host('user');
  const driver = user.spawn(
    'python3',
    [join(repoRoot, 'examples', 'python', 'pi_driver.py'), '--master', master.url, '--slices', '4'],
    { env },
  );
  const end = await driver.closed;
  assert.equal(end.code, 0, driver.stderr);
  assert.match(driver.stdout, /Pi is roughly 3\.1/);
  assert.match(
    driver.stderr,
    new RegExp(
      `Listening on ${user.address.replaceAll('.', '\\.')}:\\d+ \\(authentication on: cluster secret from WICK_AUTH_SECRET\\)`,
    ),
  );
});
