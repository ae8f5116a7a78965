/**
 * Users' submit tokens (issue 28, "Users submit with their own credential"), against real
 * processes: the operator makes tokens with `wick token create` (the cluster secret, found on
 * this machine with nothing set up); a token's holder submits a client-mode application with
 * `wick submit --token-file` and watches it (`wick status`), its driver holding a submission's
 * key and never the token; the same token is refused another user's application's log and kill
 * (naming why), every worker's or operator's message, and by the worker itself; a token made
 * with --all-apps reads that log; a revoked and an expired token are refused at the handshake;
 * tokens outlive a restart of the master.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { LOG_RELAY_ENDPOINT } from '../../backend/protocol/endpoints.js';
import { AppDir } from '../helpers/apps.js';
import { runWick } from '../helpers/cli.js';
import { startMaster } from '../helpers/cluster.js';
import {
  type AppCredential,
  assertNotPermitted,
  HostilePeer,
  refusedAtHandshake,
} from '../helpers/hostile.js';
import { checkNothingLeftRunning } from '../helpers/leaks.js';
import { runExecutor, startLogCluster } from '../helpers/logCluster.js';
import { waitFor } from '../helpers/processes.js';

checkNothingLeftRunning();
const apps = new AppDir();
const dir = mkdtempSync(join(tmpdir(), 'wick-test-tokens-'));
after(() => {
  apps.remove();
  rmSync(dir, { recursive: true, force: true });
});

const APP = apps.write(
  'count.mjs',
  `import { readFileSync } from 'node:fs';
import { WickContext } from 'wick';
const wc = await WickContext.create({ appName: 'alice-count' });
const n = await wc.parallelize([1, 2, 3, 4], 2).map((x) => x * 2).count();
console.log('COUNT ' + n);
const environ = readFileSync('/proc/self/environ', 'latin1');
console.log('ENVIRON_HAS_TOKEN ' + environ.includes('token:tok-'));
console.log('HOLDS_SUBMISSION_KEY ' + /^submission:/.test(process.env.WICK_APP_CREDENTIAL ?? ''));
await wc.stop();
`,
);

async function createToken(url: string, name: string, ...more: string[]) {
  const r = await runWick(['token', 'create', '--name', name, '--master', url, ...more]);
  assert.equal(r.code, 0, r.stderr);
  const text = r.stdout.trim();
  const m = /^token:(tok-[0-9a-f]{16}):([0-9a-f]{64})$/.exec(text);
  assert.ok(m, `wick token create printed ${JSON.stringify(r.stdout)}`);
  const file = join(dir, name);
  writeFileSync(file, `${text}\n`, { mode: 0o600 });
  const credential: AppCredential = { kind: 'token', id: m[1] as string, key: m[2] as string };
  return { file, credential };
}

test('a token submits and watches its own application, and gets nothing else', {
  timeout: 240_000,
}, async (t) => {
  const { master, worker } = await startLogCluster(t);
  const alice = await createToken(master.url, 'alice');
  const ops = await createToken(master.url, 'ops', '--all-apps', '--ttl', '30d');

  // Its own application: submitted in client mode, run to the end, its driver never the token's.
  const run = await runWick(['submit', '--token-file', alice.file, '--master', master.url, APP]);
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /COUNT 4/);
  assert.match(run.stdout, /ENVIRON_HAS_TOKEN false/);
  assert.match(run.stdout, /HOLDS_SUBMISSION_KEY true/);
  const status = await runWick(['status', '--token-file', alice.file, '--master', master.url]);
  assert.equal(status.code, 0, status.stderr);
  assert.match(status.stdout, /alice-count/);
  // Its own application's log, through the master (the worker refuses a token).
  const line = status.stdout.split('\n').find((l) => l.includes('alice-count')) ?? '';
  const ownApp = /app-[\w.-]+/.exec(line)?.[0];
  assert.ok(ownApp, `no application id on ${JSON.stringify(line)}`);
  const alicePeer = await HostilePeer.connect(t, master.address, {
    kind: 'app',
    credential: alice.credential,
  });
  const own = await alicePeer.ask(LOG_RELAY_ENDPOINT, {
    type: 'RequestLogRange',
    appId: ownApp,
    execId: 0,
    stream: 'stderr',
    offset: 0,
    length: 1000,
  });
  assert.equal(own.error, undefined, JSON.stringify(own));

  // Another user's application (registered with the cluster secret).
  const other = await runExecutor(
    t,
    master.url,
    "console.log('bob-secret-log'); setInterval(() => {}, 1000)",
  );
  await other.state('RUNNING');
  const peer = await HostilePeer.connect(t, master.address, {
    kind: 'app',
    credential: alice.credential,
  });
  const kill = await peer.ask('Master', { type: 'RequestKillApplication', appId: other.appId });
  assertNotPermitted(
    kill,
    new RegExp(
      `RequestKillApplication of ${other.appId}: ${other.appId} was not submitted with token alice`,
    ),
  );
  const log = await peer.ask(LOG_RELAY_ENDPOINT, {
    type: 'RequestLogRange',
    appId: other.appId,
    execId: 0,
    stream: 'stdout',
    offset: 0,
    length: 1000,
  });
  assertNotPermitted(log, /reading the log of .* was not submitted with token alice/);
  const heartbeat = await peer.ask('Master', {
    type: 'Heartbeat',
    workerId: 'worker-20260101000000-127.0.0.1-1',
    worker: { address: master.address, name: 'Worker' },
  });
  assertNotPermitted(
    heartbeat,
    /Heartbeat: it is sent by worker, and this connection proved token:tok-/,
  );
  const create = await peer.ask('Master', { type: 'CreateToken', name: 'mallory', allApps: true });
  assertNotPermitted(
    create,
    /CreateToken: a token may submit, watch, kill and read the logs of its applications/,
  );
  // The worker accepts no token at all.
  const atWorker = await refusedAtHandshake(t, worker.address, {
    kind: 'app',
    credential: alice.credential,
  });
  assert.match(atWorker, /does not accept token:tok-/);

  // A token made with --all-apps reads it (the positive control of the refusal above).
  const opsPeer = await HostilePeer.connect(t, master.address, {
    kind: 'app',
    credential: ops.credential,
  });
  await waitFor("the --all-apps token to read the other application's log", async () => {
    const read = await opsPeer.ask(LOG_RELAY_ENDPOINT, {
      type: 'RequestLogRange',
      appId: other.appId,
      execId: 0,
      stream: 'stdout',
      offset: 0,
      length: 1000,
    });
    assert.equal(read.error, undefined, JSON.stringify(read));
    const text = Buffer.from((read.result as { data: string }).data, 'base64').toString();
    return text.includes('bob-secret-log');
  });

  // Revoked: refused at the handshake, and on the connection it already had.
  const revoke = await runWick(['token', 'revoke', 'alice', '--master', master.url]);
  assert.equal(revoke.code, 0, revoke.stderr);
  assert.match(revoke.stdout, new RegExp(`Revoked ${alice.credential.id} \\(alice\\)`));
  const again = await peer.ask('Master', { type: 'RequestMasterState', limit: 1 });
  assertNotPermitted(again, /is not one of this master's \(revoked, or never made here\)/);
  assert.match(
    await refusedAtHandshake(t, master.address, { kind: 'app', credential: alice.credential }),
    /does not accept token:tok-/,
  );
  const refusedCli = await runWick(['status', '--token-file', alice.file, '--master', master.url]);
  assert.notEqual(refusedCli.code, 0);

  // Expired.
  const brief = await createToken(master.url, 'brief', '--ttl', '2s');
  await HostilePeer.connect(t, master.address, { kind: 'app', credential: brief.credential });
  await waitFor(
    'the 2 s token to expire',
    async () => {
      try {
        await refusedAtHandshake(t, master.address, { kind: 'app', credential: brief.credential });
        return true;
      } catch {
        return false;
      }
    },
    30_000,
  );

  // The list, then a restart: ops is still valid, alice still revoked.
  const list = await runWick(['token', 'list', '--master', master.url]);
  assert.match(list.stdout, /ops .* all apps/);
  assert.doesNotMatch(list.stdout, /alice/);
  await master.stop();
  const restarted = await startMaster(t);
  const opsAgain = await HostilePeer.connect(t, restarted.address, {
    kind: 'app',
    credential: ops.credential,
  });
  const state = await opsAgain.ask('Master', { type: 'RequestMasterState', limit: 1 });
  assert.equal(state.error, undefined, JSON.stringify(state));
  await refusedAtHandshake(t, restarted.address, { kind: 'app', credential: alice.credential });
});
