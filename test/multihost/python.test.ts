/**
 * The Python example across hosts: pi_driver.py on the user's host, its executors (executor.py)
 * launched by workers on two other hosts, with no address given: the driver listens on its
 * address on the route to the master, which the executors reach.
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
  const master = await net.host('master').startMaster();
  await net.host('w1').startWorker(master.url, { cores: 1 });
  await net.host('w2').startWorker(master.url, { cores: 1 });
  const user = net.host('user');
  const driver = user.spawn('python3', [
    join(repoRoot, 'examples', 'python', 'pi_driver.py'),
    '--master',
    master.url,
    '--slices',
    '4',
  ]);
  const end = await driver.closed;
  assert.equal(end.code, 0, driver.stderr);
  assert.match(driver.stdout, /Pi is roughly 3\.1/);
  assert.match(driver.stderr, new RegExp(`Listening on ${user.address.replaceAll('.', '\\.')}:`));
});
