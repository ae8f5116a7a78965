/**
 * A supervised cluster-mode driver relaunched under a new id (SPARK-19900) is still its token's:
 * alice's token submits it, its worker dies, the master relaunches it on the other worker as
 * driver-…; then bob's token is refused the new id's status and kill (naming why), and alice's
 * token gets both. The owner travels in the driver's record (DriverInfo.owner), not in a table
 * keyed by the id the token submitted.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { DriverDescription } from '../../../backend/protocol/common.js';
import { runWick } from '../../helpers/cli.js';
import { startMaster } from '../../helpers/cluster.js';
import { type AppCredential, assertNotPermitted, HostilePeer } from '../../helpers/hostile.js';
import { checkNothingLeftRunning } from '../../helpers/leaks.js';
import { connectClient, driverIn, MockWorker, workerIn } from '../../helpers/masterMocks.js';
import { waitFor } from '../../helpers/processes.js';

checkNothingLeftRunning();
const dir = mkdtempSync(join(tmpdir(), 'wick-test-relaunch-owner-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const desc: DriverDescription = {
  appPath: '/tmp/app.js',
  mem: 512,
  cores: 1,
  supervise: true,
  command: { argv: ['node', '{{USER_APP}}'], env: {} },
};

async function createToken(url: string, name: string): Promise<AppCredential> {
  const r = await runWick(['token', 'create', '--name', name, '--master', url]);
  assert.equal(r.code, 0, r.stderr);
  const m = /^token:(tok-[0-9a-f]{16}):([0-9a-f]{64})$/.exec(r.stdout.trim());
  assert.ok(m, `wick token create printed ${JSON.stringify(r.stdout)}`);
  return { kind: 'token', id: m[1] as string, key: m[2] as string };
}

test("a relaunched driver is still the token's that submitted it", {
  timeout: 120_000,
}, async (t) => {
  const master = await startMaster(t);
  const client = await connectClient(t, master.url);
  const a = await MockWorker.start(t, master.url, { cores: 1, memory: 1024 });
  const b = await MockWorker.start(t, master.url, { cores: 1, memory: 1024 });
  for (const w of [a, b]) assert.equal((await w.registerAndWait()).type, 'RegisteredWorker');
  const alice = await HostilePeer.connect(t, master.address, {
    kind: 'app',
    credential: await createToken(master.url, 'alice'),
  });
  const bob = await HostilePeer.connect(t, master.address, {
    kind: 'app',
    credential: await createToken(master.url, 'bob'),
  });

  const submitted = await alice.ask('Master', {
    type: 'RequestSubmitDriver',
    driverDescription: desc,
  });
  const first = (submitted.result as { driverId?: string } | undefined)?.driverId;
  assert.ok(first, JSON.stringify(submitted));
  const s0 = await client.waitFor((s) => driverIn(s, first)?.workerId !== undefined);
  const dies = driverIn(s0, first)?.workerId === a.id ? a : b;
  await dies.stop();
  await client.waitFor((s) => workerIn(s, dies.id)?.state === 'DEAD');
  // A fresh snapshot each time: the relaunch may be announced with the worker's death already.
  const again = await waitFor('the relaunch', async () => {
    const s = await client.state();
    return s.activeDrivers.find((d) => d.relaunchedFrom === first)?.id;
  });
  assert.notEqual(again, first);

  for (const type of ['RequestDriverStatus', 'RequestKillDriver']) {
    assertNotPermitted(
      await bob.ask('Master', { type, driverId: again }),
      new RegExp(`${type} of ${again}: ${again} was not submitted with token bob`),
    );
  }
  const own = await alice.ask('Master', { type: 'RequestDriverStatus', driverId: again });
  assert.equal(own.error, undefined, JSON.stringify(own));
  assert.equal((own.result as { found?: boolean }).found, true, JSON.stringify(own));
  const kill = await alice.ask('Master', { type: 'RequestKillDriver', driverId: again });
  assert.equal(kill.error, undefined, JSON.stringify(kill));
  assert.equal((kill.result as { success?: boolean }).success, true, JSON.stringify(kill));
  // The master has the worker that runs the relaunch kill it.
  const survivor = dies === a ? b : a;
  await survivor.endpoint.next('KillDriver', (m) => m.driverId === again);
});
