/**
 * A long-lived client's subscription to the master of a URL list, against mock masters in
 * RpcEnvs on port 0: the leader's state is mirrored and kept; when its connection drops, the
 * session moves to the master that leads now (its state replacing the old one's), and only when
 * none answers is the master lost, saying which.
 */
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { MasterSession } from '../../backend/client/MasterSession.js';
import type { RecoveryState } from '../../backend/protocol/common.js';
import { RequestMasterState } from '../../backend/protocol/state.js';
import { clientEnvForTest, startMockMaster } from '../helpers/mockMaster.js';
import { within } from '../helpers/within.js';

async function masters(t: TestContext, ...states: RecoveryState[]) {
  const started = await Promise.all(states.map((s) => startMockMaster(s)));
  t.after(() => Promise.all(started.map((m) => m.env.stop())));
  return started;
}

async function open(t: TestContext, url: string) {
  const env = await clientEnvForTest();
  t.after(() => env.stop());
  return MasterSession.open(env, url, 'SessionMirror');
}

test("the leader's state, then its pushed changes, in order", async (t) => {
  const [standby, alive] = await masters(t, 'STANDBY', 'ALIVE');
  const { session, snapshot } = await open(t, `wick://${standby?.address},${alive?.address}`);
  assert.equal(snapshot.url, alive?.master.state.url);
  assert.equal(session.master.address, alive?.address);
  const seen: number[] = [];
  session.onChange = (s) => seen.push(s.seq);
  alive?.master.push({ status: 'ALIVE' });
  alive?.master.push({ removedApps: [] });
  await within(
    5000,
    session.mirror.waitFor((s) => s.seq === 2),
    'the second change',
  );
  assert.deepEqual(seen, [1, 2]);
});

test('after a failover, the state is the new leader’s, even with fewer changes numbered', async (t) => {
  const [first, second] = await masters(t, 'ALIVE', 'STANDBY');
  if (!first || !second) throw new Error('two masters');
  const { session } = await open(t, `wick://${first.address},${second.address}`);
  for (let i = 0; i < 5; i++) first.master.push({ status: 'ALIVE' });
  await within(
    5000,
    session.mirror.waitFor((s) => s.seq === 5),
    'five changes',
  );
  const failedOver = new Promise<string>((r) => {
    session.onFailover = (m) => r(m.address);
  });
  let lost: string | undefined;
  session.onLost = (m) => {
    lost = m;
  };
  second.master.state.status = 'ALIVE';
  await first.env.stop();
  assert.equal(await within(5000, failedOver, 'the failover'), second.address);
  assert.equal(session.master.address, second.address);
  assert.equal(session.state?.url, second.master.state.url);
  assert.equal(session.state?.seq, 0, "the new master's numbering");
  second.master.push({ status: 'ALIVE' });
  await within(
    5000,
    session.mirror.waitFor((s) => s.seq === 1),
    "the new master's change",
  );
  assert.equal(lost, undefined);
});

test('one master, gone: the session is lost, saying which master', async (t) => {
  const [only] = await masters(t, 'ALIVE');
  if (!only) throw new Error('a master');
  const { session } = await open(t, `wick://${only.address}`);
  const lost = new Promise<string>((r) => {
    session.onLost = r;
  });
  await only.env.stop();
  assert.equal(
    await within(5000, lost, 'the loss'),
    `Lost the connection to wick://${only.address}`,
  );
});

test('every master gone: lost, with why the others did not take over', async (t) => {
  const [a, b] = await masters(t, 'ALIVE', 'STANDBY');
  if (!a || !b) throw new Error('two masters');
  const { session } = await open(t, `wick://${a.address},${b.address}`);
  const lost = new Promise<string>((r) => {
    session.onLost = r;
  });
  await b.env.stop();
  await a.env.stop();
  const message = await within(5000, lost, 'the loss');
  assert.ok(
    message.startsWith(
      `Lost the connection to wick://${a.address}, and no other master took over: Cannot reach a master. Tried:\n  wick://${b.address}: `,
    ),
    message,
  );
});

test('close() unsubscribes, and the session hears nothing more', async (t) => {
  const [m] = await masters(t, 'ALIVE');
  if (!m) throw new Error('a master');
  const { session } = await open(t, `wick://${m.address}`);
  assert.equal(m.master.subscribers.length, 1);
  let heard = 0;
  session.onChange = () => heard++;
  session.onLost = () => heard++;
  session.close();
  // An ask after the unsubscribe, on the same connection, comes after it.
  await session.master.ask(RequestMasterState({}));
  assert.equal(m.master.subscribers.length, 0);
  m.master.push({ status: 'ALIVE' });
  await m.env.stop();
  assert.equal(heard, 0);
});
