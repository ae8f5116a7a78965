/**
 * SPARK-20529, black-box against a real master process: RegisteredWorker.masterAddress is the
 * address the worker dialled, not the master's own. The master binds 0.0.0.0 (so it advertises its
 * host name) and the worker reaches it through 127.0.0.2, a loopback address the master never
 * names; a worker that later re-registers through the master's own name may not reach it at all
 * (a master in a container, behind NAT), which is the bug Spark fixed.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startMaster } from '../helpers/cluster.js';
import { checkNothingLeftRunning } from '../helpers/leaks.js';
import { MockWorker } from '../helpers/masterMocks.js';

checkNothingLeftRunning();

test('SPARK-20529: the master replies with the address the worker used to reach it', {
  timeout: 60_000,
}, async (t) => {
  const master = await startMaster(t, { host: '0.0.0.0' });
  const dialled = `127.0.0.2:${master.port}`;
  assert.notEqual(master.address, dialled, 'the master must advertise another address');
  const w = await MockWorker.start(t, `wick://${dialled}`);
  const reply = await w.registerAndWait();
  assert.equal(reply.type, 'RegisteredWorker');
  assert.equal(reply.masterAddress, dialled);
  // The master still names itself by its own address.
  assert.equal((reply.master as { address: string }).address, master.address);
});
