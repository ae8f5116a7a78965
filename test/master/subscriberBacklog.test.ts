/**
 * A subscriber that never reads, against a real master: a raw socket subscribes to the state and
 * stops reading, while the state changes by megabytes (an application granted executors on 2,000
 * workers and ended, again and again: every round pushes every worker's entry twice). The master
 * drops it once more than wick.master.subscriber.maxBacklog waits for it (16m, the default),
 * closes its connection, says so in its log, and its memory stays bounded while the changes go on.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startMaster } from '../helpers/cluster.js';
import { notify, OPEN, registerFakeWorkers, rssOf } from '../helpers/fakeWorkers.js';
import { checkNothingLeftRunning } from '../helpers/leaks.js';
import { RawClient } from '../helpers/peer.js';
import { within } from '../helpers/within.js';

checkNothingLeftRunning();

const WORKERS = 2_000;
/**
 * Rounds in all, each pushing about 14 MB: the drop comes after a few, the rest show that the
 * master no longer grows with them (without the limit, the 60 rounds took it from 118 MB to 1.4 GB;
 * with it, the peak was 347 MB).
 */
const ROUNDS = 60;
const MB = 1024 * 1024;

test('a subscriber that does not read is disconnected, and the master’s memory stays bounded', {
  timeout: 240_000,
}, async (t) => {
  // One completed application kept: the master's own state stays the same size round after round.
  const master = await startMaster(t, {
    conf: { ...OPEN, 'wick.worker.timeout': '1h', 'wick.deploy.retainedApplications': 1 },
  });
  await registerFakeWorkers(t, master.address, WORKERS);

  const stuck = await RawClient.connect(master.address, t);
  await stuck.hello('client-stuck');
  const subscribed = await stuck.ask('client-stuck', 'Master', {
    type: 'SubscribeMasterState',
    subscriber: { address: 'client-stuck', name: 'Mirror' },
    limit: 1,
  });
  assert.equal(subscribed.result?.type, 'MasterStateResponse', JSON.stringify(subscribed));
  // From now on nothing is read: the kernel's buffers fill, then the master's queue.
  stuck.socket.pause();

  const driver = await RawClient.connect(master.address, t);
  await driver.hello('client-app');
  driver.discard = true;
  let appId: ((id: string) => void) | undefined;
  driver.onFrame = (f) => {
    if (f.method === 'RegisteredApplication') {
      appId?.((f.params as { message: { appId: string } }).message.appId);
    }
  };
  /** An application registers, gets an executor on every worker, and ends. */
  const round = async () => {
    const id = new Promise<string>((resolve) => {
      appId = resolve;
    });
    await notify(driver, 'client-app', 'Master', {
      type: 'RegisterApplication',
      appDescription: {
        name: 'churn',
        user: 'u',
        memoryPerExecutorMB: 1,
        command: { argv: ['node', 'x.js'], env: {} },
      },
      driver: { address: 'client-app', name: 'AppClient' },
    });
    await notify(driver, 'client-app', 'Master', {
      type: 'UnregisterApplication',
      appId: await within(30_000, id, 'RegisteredApplication'),
    });
  };

  const baseline = await rssOf(master.pid);
  let peak = baseline;
  const dropped = master.waitForStderr(
    /Disconnecting state subscriber wick:\/\/client-stuck\/Mirror: ([\d.]+) MiB of state pushes unread, more than wick\.master\.subscriber\.maxBacklog \(16\.0 MiB\)/,
  );
  let done = false;
  void dropped.then(
    () => {
      done = true;
    },
    () => {},
  );
  let rounds = 0;
  let dropRound = 0;
  let atDrop = 0;
  // The master goes on changing after the drop: none of it is queued for the subscriber now.
  while (rounds < ROUNDS) {
    await round();
    rounds++;
    const rss = await rssOf(master.pid);
    peak = Math.max(peak, rss);
    if (done && dropRound === 0) {
      dropRound = rounds;
      atDrop = rss;
    }
  }
  const [, backlog] = await within(10_000, dropped, 'the master dropped the subscriber');
  t.diagnostic(
    `dropped after ${dropRound} rounds with ${backlog} MiB unread; master RSS ${Math.round(baseline / MB)} MB before, ${Math.round(atDrop / MB)} MB at the drop, peak ${Math.round(peak / MB)} MB over ${ROUNDS} rounds`,
  );
  // Its connection is closed: once it reads again, it reads to the end and sees the close.
  stuck.discard = true;
  stuck.socket.resume();
  await within(10_000, stuck.closed, 'the stuck subscriber’s connection closed');
  // 16 MiB queued at most, plus what the master's heap keeps of its own work on the rounds (it
  // levels off at about 230 MB more here); without the limit these rounds grew it by 1.28 GB.
  assert.ok(
    peak - baseline < 400 * MB,
    `the master grew by ${Math.round((peak - baseline) / MB)} MB (from ${Math.round(baseline / MB)} MB)`,
  );
  // And it still answers.
  const client = await RawClient.connect(master.address, t);
  await client.hello('client-after');
  const state = await client.ask('client-after', 'Master', {
    type: 'RequestMasterState',
    limit: 1,
  });
  assert.equal(state.result?.type, 'MasterStateResponse');
});
