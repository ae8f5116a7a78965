/**
 * A master given the cluster secret in WICK_AUTH_SECRET and a worker given it with
 * `--conf wick.authenticate.secret=…` (the ways docs/security.md warns of) mask it in what any
 * process of their user reads of them (/proc/<pid>/environ, /proc/<pid>/cmdline), and still use
 * it: the worker joins, and `wick status` with the secret sees it ALIVE.
 */
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { assertBuilt, killMarked, runWick, startWick } from '../helpers/cli.js';
import { waitFor } from '../helpers/processes.js';

const dir = mkdtempSync(join(tmpdir(), 'wick-startup-secrets-'));
const mark = randomUUID();
before(assertBuilt);
after(async () => {
  await killMarked(mark);
  rmSync(dir, { recursive: true, force: true });
});

const read = (pid: number, file: 'environ' | 'cmdline') =>
  readFileSync(`/proc/${pid}/${file}`, 'latin1').split('\0');

test('the secret in a daemon’s environment or command line is masked there, and still works', {
  timeout: 60_000,
}, async () => {
  const secret = randomBytes(24).toString('base64url');
  const stars = '*'.repeat(secret.length);
  const master = startWick(
    ['master', '--host', '127.0.0.1', '--port', '0', '--webui-port', '0', '--print-ready'],
    { mark, env: { WICK_AUTH_SECRET: secret } },
  );
  const { url } = JSON.parse(await master.firstLine()) as { url: string };
  const worker = startWick(
    [
      'worker',
      url,
      '--host',
      '127.0.0.1',
      '--webui-port',
      '0',
      '--cores',
      '1',
      '--memory',
      '512m',
      '--work-dir',
      join(dir, 'work'),
      '--conf',
      `wick.authenticate.secret=${secret}`,
      '--print-ready',
    ],
    { mark },
  );
  await worker.firstLine();

  const masterEnv = read(master.pid, 'environ');
  assert.ok(masterEnv.includes(`WICK_AUTH_SECRET=${stars}`), 'the entry is there, masked');
  assert.ok(!masterEnv.join('\n').includes(secret));
  const workerArgs = read(worker.pid, 'cmdline');
  assert.ok(workerArgs.includes(`wick.authenticate.secret=${stars}`), workerArgs.join(' '));
  assert.ok(!workerArgs.join('\n').includes(secret));

  // Both still hold it: the worker, given it on its command line, joins the master, given it in
  // its environment; a client with it sees the worker (and the client masks its own copy too).
  await waitFor('the worker ALIVE at the master', async () => {
    const s = await runWick(['status', '--master', url, '--json'], {
      env: { WICK_AUTH_SECRET: secret },
    });
    assert.equal(s.code, 0, s.stderr);
    return (JSON.parse(s.stdout) as { workers: { state: string }[] }).workers.some(
      (w) => w.state === 'ALIVE',
    );
  });
  assert.match(
    master.stderr(),
    /WICK_AUTH_SECRET was given in this master's environment\. The master masked it in \/proc\/\d+\/environ/,
  );
  // The master took it out of its environment into its settings, and still names where from.
  assert.match(master.stderr(), /Peers must prove the cluster secret \(from WICK_AUTH_SECRET\)/);
  assert.match(worker.stderr(), /puts the cluster secret on this process's command line/);
  master.child.kill('SIGTERM');
  worker.child.kill('SIGTERM');
  await Promise.all([master.exited, worker.exited]);
});
