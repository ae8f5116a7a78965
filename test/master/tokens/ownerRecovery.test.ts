/**
 * Users' tokens and what they own across a master's failure, with real daemons. FILESYSTEM: alice's
 * token submits a client-mode application (`wick submit --token-file`); the master is SIGKILLed
 * and restarted on the same port and recovery directory; the driver re-registers; then bob's
 * token is still refused the kill (naming why), and alice's is still granted it. ZOOKEEPER: the
 * tokens are made (and one revoked) on the leader, which is SIGKILLed; the standby, with a config
 * folder of its own, takes over with the tokens of the recovery store and the application's
 * owner from its record: the same refusals and grants, and the revoked token stays revoked.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, test } from 'node:test';
import { AppDir, appIdIn } from '../../helpers/apps.js';
import { runWick, startWick } from '../../helpers/cli.js';
import { Daemon, startMaster, startWorker } from '../../helpers/cluster.js';
import {
  type AppCredential,
  assertNotPermitted,
  HostilePeer,
  refusedAtHandshake,
} from '../../helpers/hostile.js';
import { checkNothingLeftRunning } from '../../helpers/leaks.js';
import { appIn, connectClient } from '../../helpers/masterMocks.js';
import { waitFor } from '../../helpers/processes.js';
import { skipWithoutZooKeeper, startZooKeeper } from '../../helpers/zookeeper.js';

checkNothingLeftRunning();
const apps = new AppDir();
const dir = mkdtempSync(join(tmpdir(), 'wick-test-owner-recovery-'));
after(() => {
  apps.remove();
  rmSync(dir, { recursive: true, force: true });
});

/** A driver that stays up until it is killed. */
const APP = apps.write(
  'linger.mjs',
  `import { WickContext } from 'wick';
const wc = await WickContext.create({ appName: 'alice-linger' });
console.log('COUNT ' + (await wc.parallelize([1, 2], 2).count()));
await new Promise((r) => setTimeout(r, 600_000));
`,
);

async function createToken(url: string, name: string) {
  const r = await runWick(['token', 'create', '--name', name, '--master', url]);
  assert.equal(r.code, 0, r.stderr);
  const m = /^token:(tok-[0-9a-f]{16}):([0-9a-f]{64})$/.exec(r.stdout.trim());
  assert.ok(m, `wick token create printed ${JSON.stringify(r.stdout)}`);
  const file = join(dir, name);
  writeFileSync(file, `${r.stdout.trim()}\n`, { mode: 0o600 });
  const credential: AppCredential = { kind: 'token', id: m[1] as string, key: m[2] as string };
  return { file, credential };
}

test("after a master's restart with FILESYSTEM recovery, a recovered application is still its token's alone", {
  timeout: 240_000,
}, async (t) => {
  const recovery = join(dir, 'recovery');
  const conf = {
    'wick.deploy.recoveryMode': 'FILESYSTEM',
    'wick.deploy.recoveryDirectory': recovery,
    'wick.worker.timeout': '60s',
  };
  t.after(async () => {
    await Promise.all(Daemon.running().map((d) => d.stop()));
  });
  const first = await startMaster(t, { conf });
  await startWorker(t, first.url, { cores: 2 });
  const alice = await createToken(first.url, 'alice');
  const bob = await createToken(first.url, 'bob');

  const driver = startWick(['submit', '--token-file', alice.file, '--master', first.url, APP]);
  t.after(async () => {
    driver.child.kill('SIGKILL');
    await driver.exited;
  });
  await waitFor('the driver to count', async () => /COUNT 2/.test(driver.stdout()), 120_000);
  const appId = appIdIn(driver.stdout() + driver.stderr());
  assert.ok(appId, driver.stderr());

  const bobRefused = async (address: string) => {
    const peer = await HostilePeer.connect(t, address, { kind: 'app', credential: bob.credential });
    const kill = await peer.ask('Master', { type: 'RequestKillApplication', appId });
    assertNotPermitted(
      kill,
      new RegExp(`RequestKillApplication of ${appId}: ${appId} was not submitted with token bob`),
    );
  };
  await bobRefused(first.address);

  await first.kill('SIGKILL');
  const second = await startMaster(t, { port: first.port, conf });
  const client = await connectClient(t, second.url);
  await client.waitFor((s) => s.status === 'ALIVE' && appIn(s, appId)?.state === 'RUNNING');
  await second.waitForStderr(new RegExp(`Application has been re-registered: ${appId}`));

  // Bob still may not; alice still may, and her kill ends the application.
  await bobRefused(second.address);
  const own = await HostilePeer.connect(t, second.address, {
    kind: 'app',
    credential: alice.credential,
  });
  const kill = await own.ask('Master', { type: 'RequestKillApplication', appId });
  assert.equal(kill.error, undefined, JSON.stringify(kill));
  await client.waitFor((s) => s.completedApps.some((a) => a.id === appId && a.state === 'KILLED'));
});

test('tokens and what they own survive a ZooKeeper failover: made on the leader, honoured by the standby that takes over', {
  timeout: 300_000,
}, async (t) => {
  if (skipWithoutZooKeeper(t)) return;
  // Daemons stop before ZooKeeper does (after hooks run in the order they were added).
  t.after(async () => {
    await Promise.all(Daemon.running().map((d) => d.stop()));
  });
  const zk = await startZooKeeper(t);
  // One cluster secret, the one this test file's processes find (the CLI and the worker), named
  // to both masters; but each master its own config folder, where its own token file would be.
  const secretFile = join(process.env.XDG_CONFIG_HOME ?? '', 'wick', 'cluster-secret');
  if (!existsSync(secretFile)) {
    mkdirSync(dirname(secretFile), { recursive: true, mode: 0o700 });
    writeFileSync(secretFile, `${randomBytes(24).toString('hex')}\n`, { mode: 0o600 });
  }
  const conf = {
    'wick.authenticate.secret.file': secretFile,
    'wick.deploy.recoveryMode': 'ZOOKEEPER',
    'wick.deploy.zookeeper.url': zk.url,
    'wick.deploy.zookeeper.dir': '/wick-tokens',
    'wick.deploy.zookeeper.sessionTimeout': '2s',
    'wick.worker.timeout': '60s',
  };
  const home = (name: string) => ({ XDG_CONFIG_HOME: join(dir, `zk-${name}`) });
  const first = await startMaster(t, { conf, env: home('first'), label: 'leader' });
  await first.waitForStderr(/I have been elected leader! New state: ALIVE/);
  const second = await startMaster(t, { conf, env: home('second'), label: 'standby' });
  const masters = `wick://${first.address},${second.address}`;
  await startWorker(t, masters, { cores: 2 });

  // The standby makes no token: only the leader writes the store tokens are kept in.
  const onStandby = await runWick(['token', 'create', '--name', 'eve', '--master', second.url]);
  assert.notEqual(onStandby.code, 0, onStandby.stdout);
  assert.match(
    onStandby.stderr,
    /This master is not the leader: make tokens on the leading master/,
  );
  const alice = await createToken(first.url, 'alice');
  const bob = await createToken(first.url, 'bob');
  const carol = await createToken(first.url, 'carol');
  const revoke = await runWick(['token', 'revoke', 'carol', '--master', first.url]);
  assert.equal(revoke.code, 0, revoke.stderr);

  const driver = startWick(['submit', '--token-file', alice.file, '--master', masters, APP]);
  t.after(async () => {
    driver.child.kill('SIGKILL');
    await driver.exited;
  });
  await waitFor('the driver to count', async () => /COUNT 2/.test(driver.stdout()), 120_000);
  const appId = appIdIn(driver.stdout() + driver.stderr());
  assert.ok(appId, driver.stderr());

  await first.kill('SIGKILL');
  await second.waitForStderr(/I have been elected leader! New state: RECOVERING/);
  await second.waitForStderr(/Users' tokens from the recovery store: 2/);
  const client = await connectClient(t, second.url);
  await client.waitFor((s) => s.status === 'ALIVE' && appIn(s, appId)?.state === 'RUNNING');

  // The new leader knows alice's and bob's tokens, not carol's (revoked on the old one).
  assert.match(
    await refusedAtHandshake(t, second.address, { kind: 'app', credential: carol.credential }),
    /does not accept token:tok-/,
  );
  const list = await runWick(['token', 'list', '--master', second.url]);
  assert.equal(list.code, 0, list.stderr);
  assert.match(list.stdout, /alice/);
  assert.match(list.stdout, /bob/);
  assert.doesNotMatch(list.stdout, /carol/);
  // Bob may not kill alice's application; alice may.
  const bobPeer = await HostilePeer.connect(t, second.address, {
    kind: 'app',
    credential: bob.credential,
  });
  assertNotPermitted(
    await bobPeer.ask('Master', { type: 'RequestKillApplication', appId }),
    new RegExp(`RequestKillApplication of ${appId}: ${appId} was not submitted with token bob`),
  );
  const own = await HostilePeer.connect(t, second.address, {
    kind: 'app',
    credential: alice.credential,
  });
  const kill = await own.ask('Master', { type: 'RequestKillApplication', appId });
  assert.equal(kill.error, undefined, JSON.stringify(kill));
  await client.waitFor((s) => s.completedApps.some((a) => a.id === appId && a.state === 'KILLED'));
});
