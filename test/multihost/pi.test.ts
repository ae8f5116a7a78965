/**
 * SparkPi across hosts, as a new user runs it: a master and two workers each on a host of their
 * own, `wick submit` from a fourth, with no setting at all. The driver must advertise an address
 * the workers' executors can reach (not loopback), and both workers must take part.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hostsUnavailable, startHosts } from '../helpers/hosts.js';

test('SparkPi submitted from the user’s host runs on workers on two other hosts', {
  skip: hostsUnavailable(),
}, async (t) => {
  const net = await startHosts(t, ['master', 'w1', 'w2', 'user']);
  const master = await net.host('master').startMaster();
  const url = `wick://${net.host('master').address}:7077`;
  assert.equal(master.url, url);
  const w1 = await net.host('w1').startWorker(url, { cores: 1 });
  const w2 = await net.host('w2').startWorker(url, { cores: 1 });

  const user = net.host('user');
  const pi = await user.wick(['submit', '--master', url, 'examples/pi.ts', '4'], {
    timeoutMs: 120_000,
  });
  assert.equal(pi.code, 0, pi.stderr);
  assert.match(pi.stdout, /Pi is roughly 3\.1/);
  assert.match(pi.stderr, new RegExp(`Driver address ${user.address.replaceAll('.', '\\.')} `));

  const appId = /app ID (app-\S+)/.exec(pi.stderr)?.[1];
  assert.ok(appId, pi.stderr);
  const status = await user.wick(['status', '--json', '--master', url, appId]);
  assert.equal(status.code, 0, status.stderr);
  const app = JSON.parse(status.stdout) as {
    state: string;
    removedExecutors: { workerHostPort: string; state: string }[];
  };
  assert.equal(app.state, 'FINISHED');
  const hosts = new Set(app.removedExecutors.map((e) => e.workerHostPort.split(':')[0]));
  assert.deepEqual([...hosts].sort(), [w1.address, w2.address].map((a) => a.split(':')[0]).sort());
});
