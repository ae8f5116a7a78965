/**
 * A client-mode driver holds only its submission's and its application's keys (issue 28): `wick
 * submit` given the cluster secret in WICK_AUTH_SECRET, or on its command line with --conf
 * wick.authenticate.secret=, runs the application in a child started without it. The
 * application looks for the secret (by its SHA-256, never the secret itself) in its own
 * /proc/self/environ and /proc/self/cmdline and finds it in neither, nor in its parent's (the
 * submit that was given it, which waits for the child, and masked it there as every Wick process
 * does: backend/cli/startupSecrets.ts). It does find it in a decoy's environment, a process that
 * is not Wick's started with the secret: the negative control that shows the snoop can find it.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { after, test } from 'node:test';
import { AppDir } from '../helpers/apps.js';
import { runWick } from '../helpers/cli.js';
import { clusterSecret } from '../helpers/hostile.js';
import { checkNothingLeftRunning } from '../helpers/leaks.js';
import { startLogCluster } from '../helpers/logCluster.js';

checkNothingLeftRunning();
const apps = new AppDir();
after(() => apps.remove());

const SNOOP = apps.write(
  'snoop-self.mjs',
  `import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { WickContext } from 'wick';
const hash = process.argv[2];
const decoy = process.argv[3];
const has = (path) => {
  let text = '';
  try { text = readFileSync(path, 'latin1'); } catch { return 'unreadable'; }
  return text.split(/[\\0=\\s]+/).some((t) => t.length >= 16 && createHash('sha256').update(t).digest('hex') === hash);
};
const wc = await WickContext.create({ appName: 'snoop-self' });
const n = await wc.parallelize([1, 2], 2).count();
console.log('SNOOP ' + JSON.stringify({
  n,
  selfEnviron: has('/proc/self/environ'),
  selfCmdline: has('/proc/self/cmdline'),
  parentEnviron: has('/proc/' + process.ppid + '/environ'),
  parentCmdline: has('/proc/' + process.ppid + '/cmdline'),
  decoyEnviron: has('/proc/' + decoy + '/environ'),
}));
await wc.stop();
`,
);

function seen(stdout: string): Record<string, unknown> {
  const line = stdout.split('\n').find((l) => l.startsWith('SNOOP '));
  assert.ok(line, `no SNOOP line in ${JSON.stringify(stdout)}`);
  return JSON.parse(line.slice(6));
}

test('a client-mode driver given the secret by env or --conf finds it in neither its environ nor its cmdline', {
  timeout: 240_000,
}, async (t) => {
  const { master } = await startLogCluster(t);
  const secret = clusterSecret();
  const hash = createHash('sha256').update(secret).digest('hex');
  const decoy = spawn('sleep', ['240'], { env: { WICK_AUTH_SECRET: secret }, stdio: 'ignore' });
  t.after(() => decoy.kill());

  const byEnv = await runWick(['submit', '--master', master.url, SNOOP, hash, String(decoy.pid)], {
    env: { WICK_AUTH_SECRET: secret },
  });
  assert.equal(byEnv.code, 0, byEnv.stderr);
  assert.deepEqual(seen(byEnv.stdout), {
    n: 2,
    selfEnviron: false,
    selfCmdline: false,
    parentEnviron: false,
    parentCmdline: false,
    decoyEnviron: true,
  });

  const byConf = await runWick([
    'submit',
    '--master',
    master.url,
    '--conf',
    `wick.authenticate.secret=${secret}`,
    SNOOP,
    hash,
    String(decoy.pid),
  ]);
  assert.equal(byConf.code, 0, byConf.stderr);
  assert.deepEqual(seen(byConf.stdout), {
    n: 2,
    selfEnviron: false,
    selfCmdline: false,
    parentEnviron: false,
    parentCmdline: false,
    decoyEnviron: true,
  });
});
