/**
 * MasterConnection on its own, over a fake link and a ManualClock: registration with every
 * master, randomised retries that post ReregisterWithMaster, giving up, heartbeats once
 * registered, following a master change, and a lost connection. (handlers/master.test.ts runs
 * the same through a real Worker against mock masters.)
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { WickConf } from '../../backend/conf/WickConf.js';
import type { WireMessage } from '../../backend/protocol/registry.js';
import { ManualClock } from '../../backend/util/clock.js';
import { setLogSink } from '../../backend/util/log.js';
import { MasterConnection, type MasterRef } from '../../backend/worker/MasterConnection.js';

setLogSink(() => {});

function setup(conf: Record<string, string> = {}, masters = ['m1:7077', 'm2:7077']) {
  const clock = new ManualClock(0);
  const sent: { to: string; message: WireMessage }[] = [];
  const posted: string[] = [];
  const exits: string[] = [];
  const ref = (address: string): MasterRef => ({
    address,
    send: (message) => sent.push({ to: address, message }),
  });
  let stopped = false;
  const connection = new MasterConnection({
    masterAddresses: masters,
    conf: new WickConf({
      'wick.worker.initialRegistrationRetries': '1',
      'wick.worker.maxRegistrationRetries': '2',
      'wick.worker.initialRegistrationInterval': '10s',
      'wick.worker.prolongedRegistrationInterval': '60s',
      ...conf,
    }),
    clock,
    random: () => 0.5,
    heartbeatMs: 1000,
    exit: (_code, reason) => exits.push(reason),
    link: {
      connect: async (address) => ref(address),
      registration: (address) => ({ type: 'RegisterWorker', masterAddress: address }),
      heartbeat: () => ({ type: 'Heartbeat' }),
      post: (message) => posted.push(message.type),
      stopped: () => stopped,
    },
  });
  const settle = () => new Promise((r) => setImmediate(r));
  return { clock, sent, posted, exits, ref, connection, settle, stop: () => (stopped = true) };
}

test('registers with every master, retries at the initial then the prolonged interval, then gives up', async () => {
  const { clock, sent, posted, exits, connection, settle } = setup();
  connection.register();
  await settle();
  assert.deepEqual(
    sent.map((s) => s.to),
    ['m1:7077', 'm2:7077'],
  );
  clock.advance(9_999);
  assert.deepEqual(posted, []);
  clock.advance(1);
  assert.deepEqual(posted, ['ReregisterWithMaster']);
  connection.retry();
  await settle();
  assert.equal(connection.connectionAttemptCount, 1);
  assert.equal(sent.length, 4, 'every master again');
  clock.advance(59_999);
  assert.equal(posted.length, 1, 'the prolonged interval now');
  clock.advance(1);
  connection.retry();
  assert.deepEqual(exits, []);
  clock.advance(60_000);
  connection.retry();
  assert.deepEqual(exits, ['All masters are unresponsive! Giving up.']);
});

test('once registered: no more retries, a heartbeat every heartbeatMs, sent to that master only', async () => {
  const { clock, sent, posted, connection, ref, settle } = setup();
  connection.register();
  await settle();
  connection.registeredWith(ref('m2:7077'), 'http://m2:8080', 'm2:7077');
  assert.equal(connection.registered, true);
  assert.equal(connection.connected, true);
  assert.equal(connection.activeMasterUrl, 'wick://m2:7077');
  assert.equal(connection.activeMasterWebUiUrl, 'http://m2:8080');
  assert.equal(clock.pendingTimers(), 1, 'the heartbeat only');
  assert.deepEqual(posted, ['SendHeartbeat']);
  clock.advance(1000);
  assert.deepEqual(posted, ['SendHeartbeat', 'SendHeartbeat']);
  sent.length = 0;
  connection.sendHeartbeat();
  assert.deepEqual(sent, [{ to: 'm2:7077', message: { type: 'Heartbeat' } }]);
  connection.stop();
  assert.equal(clock.pendingTimers(), 0);
});

test('before any master answered, what is sent is dropped; a MasterChanged moves what follows', async () => {
  const { sent, connection, ref } = setup();
  connection.send({ type: 'WorkerLatestState' });
  connection.sendHeartbeat();
  assert.deepEqual(sent, []);
  connection.changeMaster(ref('m3:7077'), 'http://m3:8080', 'm3:7077');
  connection.send({ type: 'WorkerSchedulerStateResponse' });
  assert.deepEqual(sent, [{ to: 'm3:7077', message: { type: 'WorkerSchedulerStateResponse' } }]);
  assert.equal(connection.activeMasterUrl, 'wick://m3:7077');
});

test('a lost master connection: not connected, and registration starts again with that master', async () => {
  const { clock, sent, connection, ref, settle } = setup();
  connection.registeredWith(ref('m1:7077'), 'http://m1:8080', 'm1:7077');
  connection.disconnected('elsewhere:1');
  assert.equal(connection.connected, true, 'another connection changes nothing');
  connection.disconnected('m1:7077');
  assert.equal(connection.connected, false);
  assert.equal(connection.registered, false);
  await settle();
  sent.length = 0;
  clock.advance(10_000);
  connection.retry();
  await settle();
  assert.deepEqual(
    sent.map((s) => s.to),
    ['m1:7077'],
    'SPARK-4592: only the master it followed',
  );
});

test('once the env is stopping, nothing is sent or scheduled', async () => {
  const { clock, sent, posted, connection, ref, stop } = setup();
  connection.registeredWith(ref('m1:7077'), 'http://m1:8080', 'm1:7077');
  stop();
  connection.send({ type: 'Heartbeat' });
  clock.advance(1000);
  assert.deepEqual(sent, []);
  assert.deepEqual(posted, ['SendHeartbeat']);
});
