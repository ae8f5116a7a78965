/**
 * Reaching a master from a URL list, against mock masters in RpcEnvs on port 0: one URL is that
 * master; several pick the leader over a STANDBY, in the list's order; none answering is one
 * error listing every URL tried with why.
 */
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { connectMaster, leaderState, reachMasters } from '../../backend/client/masterConnection.js';
import type { RecoveryState } from '../../backend/protocol/common.js';
import { clientEnvForTest, startMockMaster } from '../helpers/mockMaster.js';
import { unusedPort } from '../helpers/net.js';

async function masters(t: TestContext, ...states: RecoveryState[]) {
  const started = await Promise.all(states.map((s) => startMockMaster(s)));
  t.after(() => Promise.all(started.map((m) => m.env.stop())));
  return started.map((m) => m.address);
}

async function client(t: TestContext) {
  const env = await clientEnvForTest();
  t.after(() => env.stop());
  return env;
}

const noMaster = (tried: string[]) =>
  new RegExp(
    `^Cannot reach a master\\. Tried:\\n${tried.map((a) => `  wick://${a.replace(/\./g, '\\.')}: .+\\n`).join('')}Is a master running\\? Start one with \`wick master\` or \`wick local-cluster\`\\.$`,
  );

test('one URL: that master, whatever its state', async (t) => {
  const [standby] = await masters(t, 'STANDBY');
  const env = await client(t);
  const ref = await connectMaster(env, `wick://${standby}`);
  assert.equal(ref.address, standby);
  assert.equal(ref.name, 'Master');
});

test('several URLs: the first that leads, not a STANDBY before it', async (t) => {
  const [standby, alive, other] = await masters(t, 'STANDBY', 'ALIVE', 'RECOVERING');
  const env = await client(t);
  const closed = `127.0.0.1:${await unusedPort()}`;
  const ref = await connectMaster(env, `wick://${closed},${standby},${alive},${other}`);
  assert.equal(ref.address, alive);
});

test('several URLs, all STANDBY: the first that answered', async (t) => {
  const [a, b] = await masters(t, 'STANDBY', 'STANDBY');
  const env = await client(t);
  const closed = `127.0.0.1:${await unusedPort()}`;
  assert.equal((await connectMaster(env, [closed, a as string, b as string])).address, a);
});

test('no master answers: one error naming every URL tried, with why, and what to do', async (t) => {
  const env = await client(t);
  const tried = [`127.0.0.1:${await unusedPort()}`, `127.0.0.1:${await unusedPort()}`];
  await assert.rejects(connectMaster(env, `wick://${tried.join(',')}`), {
    message: noMaster(tried),
  });
  const reached = await reachMasters(env, tried);
  assert.deepEqual(reached.refs, []);
  assert.equal(reached.errors.length, 2);
  assert.throws(
    () => leaderState(tried.map((a) => ({ url: `wick://${a}`, error: 'connect ECONNREFUSED' }))),
    { message: noMaster(tried) },
  );
});

test('reachMasters reaches every master that answers, and says why the others did not', async (t) => {
  const [a, b] = await masters(t, 'ALIVE', 'STANDBY');
  const env = await client(t);
  const closed = `127.0.0.1:${await unusedPort()}`;
  const { refs, errors } = await reachMasters(env, [a as string, closed, b as string]);
  assert.deepEqual(refs.map((r) => r.address).sort(), [a, b].sort());
  assert.equal(errors.length, 1);
  assert.ok(errors[0]?.startsWith(`wick://${closed}: `), errors[0]);
});
