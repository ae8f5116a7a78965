/**
 * Every master and its state, for the extension and the dashboard: two masters on a real ZooKeeper
 * write their URLs into their election znodes, and each one's state (snapshot and pushed events)
 * carries `masters`, the leader first: ALIVE, then STANDBY. A master that stops leaves the list.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Daemon, startMaster } from '../helpers/cluster.js';
import { checkNothingLeftRunning } from '../helpers/leaks.js';
import { connectClient } from '../helpers/masterMocks.js';
import { skipWithoutZooKeeper, startZooKeeper } from '../helpers/zookeeper.js';

checkNothingLeftRunning();

test('two masters on ZooKeeper: the state lists both, the leader ALIVE and the other STANDBY', {
  timeout: 60_000,
}, async (t) => {
  if (skipWithoutZooKeeper(t)) return;
  // Daemons stop before ZooKeeper does (after hooks run in the order they were added).
  t.after(async () => {
    await Promise.all(Daemon.running().map((d) => d.stop()));
  });
  const zk = await startZooKeeper(t);
  const conf = {
    'wick.deploy.recoveryMode': 'ZOOKEEPER',
    'wick.deploy.zookeeper.url': zk.url,
    'wick.deploy.zookeeper.dir': '/wick-masters',
    'wick.deploy.zookeeper.sessionTimeout': '2s',
  };
  const first = await startMaster(t, { conf });
  await first.waitForStderr(/I have been elected leader! New state: ALIVE/);
  const second = await startMaster(t, { conf });
  const url1 = `wick://${first.address}`;
  const url2 = `wick://${second.address}`;
  const both = [
    { url: url1, status: 'ALIVE' },
    { url: url2, status: 'STANDBY' },
  ];

  // The leader learns of the standby through its watch on the election (a pushed event).
  const client1 = await connectClient(t, first.url);
  const s1 = await client1.waitFor((s) => s.masters?.length === 2);
  assert.deepEqual(s1.masters, both);
  // A fresh snapshot from either master says the same.
  const client2 = await connectClient(t, second.url);
  assert.deepEqual((await client2.state()).masters, both);
  assert.deepEqual((await client1.state()).masters, both);

  // The standby goes: the leader's list follows.
  await second.stop();
  const after = await client1.waitFor((s) => s.masters?.length === 1);
  assert.deepEqual(after.masters, [{ url: url1, status: 'ALIVE' }]);
});
