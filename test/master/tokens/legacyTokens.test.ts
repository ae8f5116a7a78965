/**
 * Tokens from before they were kept in the recovery store: a master with FILESYSTEM recovery whose
 * recovery directory has a tokens.json but no `token_<id>` records (what an older Wick leaves)
 * takes the file's tokens into the store as it is elected leader, instead of dropping them (an
 * upgrade used to revoke every user's token silently). Once there, the store counts: a token
 * revoked after the upgrade stays revoked across the next restart. Real masters, real files.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { runWick } from '../../helpers/cli.js';
import { Daemon, startMaster } from '../../helpers/cluster.js';
import { HostilePeer, refusedAtHandshake } from '../../helpers/hostile.js';
import { checkNothingLeftRunning } from '../../helpers/leaks.js';

checkNothingLeftRunning();
const dir = mkdtempSync(join(tmpdir(), 'wick-test-legacy-tokens-'));
after(() => rmSync(dir, { recursive: true, force: true }));

async function wick(args: string[]): Promise<string> {
  const r = await runWick(args);
  assert.equal(r.code, 0, r.stderr);
  return r.stdout;
}

test("an older master's tokens.json is taken into the recovery store, and the store counts from then on", {
  timeout: 180_000,
}, async (t) => {
  const recovery = join(dir, 'recovery');
  const conf = {
    'wick.deploy.recoveryMode': 'FILESYSTEM',
    'wick.deploy.recoveryDirectory': recovery,
  };
  t.after(async () => {
    await Promise.all(Daemon.running().map((d) => d.stop()));
  });
  const first = await startMaster(t, { conf });
  const made = (await wick(['token', 'create', '--name', 'alice', '--master', first.url])).trim();
  const m = /^token:(tok-[0-9a-f]{16}):([0-9a-f]{64})$/.exec(made);
  assert.ok(m, made);
  const alice = { kind: 'token' as const, id: m[1] as string, key: m[2] as string };
  await first.stop();

  // What a master from before this round left: the token in tokens.json alone.
  const record = `token_${alice.id}`;
  assert.ok(readdirSync(recovery).includes(record), 'the token was kept in the store');
  rmSync(join(recovery, record));
  const file = join(recovery, 'tokens.json');
  const { inStore, ...older } = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  assert.equal(inStore, true, 'a file written by this master says it is a copy of the store');
  writeFileSync(file, JSON.stringify(older), { mode: 0o600 });

  const second = await startMaster(t, { port: first.port, conf });
  await second.waitForStderr(
    /Users' tokens from the recovery store: 0; 1 more from this master's tokens file/,
  );
  assert.ok(readdirSync(recovery).includes(record), 'the token is in the store again');
  assert.match(await wick(['token', 'list', '--master', second.url]), /alice/);
  // It still opens the master.
  await HostilePeer.connect(t, second.address, { kind: 'app', credential: alice });

  // Revoked now, it stays revoked across a restart: the file is a copy of the store again.
  await wick(['token', 'revoke', 'alice', '--master', second.url]);
  await second.stop();
  assert.ok(!readdirSync(recovery).includes(record), 'revoked in the store');
  const third = await startMaster(t, { port: first.port, conf });
  await third.waitForStderr(/Users' tokens from the recovery store: 0\b(?!;)/);
  assert.doesNotMatch(await wick(['token', 'list', '--master', third.url]), /alice/);
  // Refused at the handshake (which says no more than that to a stranger).
  await refusedAtHandshake(t, third.address, { kind: 'app', credential: alice });
});
