/**
 * `wick join` and `wick local-cluster` read their settings as every other command does:
 * `--properties-file`, else spark-defaults.conf and wick-defaults.conf in $WICK_CONF_DIR (or
 * conf/), under `--conf`. local-cluster hands the file to every daemon and reads it for its own
 * client of them.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, test } from 'node:test';
import {
  assertBuilt,
  killMarked,
  markedProcesses,
  startWick,
  waitUntilGone,
} from '../helpers/cli.js';
import { wick } from '../helpers/cluster.js';

before(assertBuilt);

test('wick join takes --properties-file and $WICK_CONF_DIR, under --conf', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'wick-join-props-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const secretFile = join(dir, 'secret');
  writeFileSync(secretFile, 'props-file-secret-0123456789\n', { mode: 0o600 });
  const props = join(dir, 'cluster.conf');
  writeFileSync(
    props,
    `spark.master spark://10.0.0.7:7077\nwick.authenticate.secret.file ${secretFile}\nwick.ssl.enabled false\n`,
  );
  // An empty config dir: no default secret file to find instead.
  const env = { XDG_CONFIG_HOME: join(dir, 'config'), WICK_AUTH_SECRET: undefined };

  const fromFile = await wick(['join', '--properties-file', props], env);
  assert.equal(fromFile.code, 0, fromFile.stderr);
  assert.match(fromFile.stdout, /^# {3}props-file-secret-0123456789$/m);
  assert.match(fromFile.stdout, /^wick worker spark:\/\/10\.0\.0\.7:7077$/m);

  const confDir = join(dir, 'conf-dir');
  mkdirSync(confDir);
  writeFileSync(
    join(confDir, 'wick-defaults.conf'),
    `wick.master wick://10.0.0.8:7077\nwick.authenticate.secret.file=${secretFile}\nwick.ssl.enabled=false\n`,
  );
  const fromConfDir = await wick(['join'], { ...env, WICK_CONF_DIR: confDir });
  assert.equal(fromConfDir.code, 0, fromConfDir.stderr);
  assert.match(fromConfDir.stdout, /^wick worker wick:\/\/10\.0\.0\.8:7077$/m);
  assert.match(fromConfDir.stdout, /props-file-secret-0123456789/);
  // --conf wins over the file; an argument over both.
  const over = await wick(['join', '--conf', 'wick.master=wick://10.0.0.9:7077'], {
    ...env,
    WICK_CONF_DIR: confDir,
  });
  assert.match(over.stdout, /^wick worker wick:\/\/10\.0\.0\.9:7077$/m);
  const arg = await wick(['join', 'wick://10.0.0.10:7077'], { ...env, WICK_CONF_DIR: confDir });
  assert.match(arg.stdout, /^wick worker wick:\/\/10\.0\.0\.10:7077$/m);
});

test('wick local-cluster hands --properties-file to its daemons and reads it for its own client', {
  timeout: 180_000,
}, async (t) => {
  const mark = randomUUID();
  const workDir = mkdtempSync(join(tmpdir(), 'wick-lc-props-'));
  t.after(async () => {
    await killMarked(mark);
    rmSync(workDir, { recursive: true, force: true });
  });
  const props = join(workDir, 'open.conf');
  // A cluster that runs open: local-cluster's own client must know it too, or it cannot talk to
  // its master; and the master's web UI then asks no login.
  writeFileSync(props, 'wick.authenticate false\nspark.worker.timeout 45s\n');
  const lc = startWick(
    [
      'local-cluster',
      '--workers',
      '1',
      '--port',
      '0',
      '--webui-port',
      '0',
      '--work-dir',
      workDir,
      '--properties-file',
      props,
    ],
    { mark, cwd: workDir, env: { XDG_CONFIG_HOME: join(workDir, 'config') } },
  );
  t.after(() => lc.child.stdin?.destroy());
  const url = await lc.firstLine();
  assert.match(url, /^wick:\/\/127\.0\.0\.1:\d+$/);
  // Ready means its client saw the worker registered; the web UI it names needs no login link.
  const ready = /web UI (http:\/\/127\.0\.0\.1:\d+)(.*)/.exec(lc.stderr());
  assert.ok(ready, lc.stderr());
  assert.doesNotMatch(ready[2] as string, /login link/);
  const json = await fetch(`${ready[1]}/json`, { headers: { connection: 'close' } });
  assert.equal(json.status, 200, 'the master runs open, as the file says');
  const state = (await json.json()) as { aliveworkers: number };
  assert.equal(state.aliveworkers, 1);
  // Every daemon was given the file.
  const daemons = markedProcesses(mark).filter((p) => p.pid !== lc.pid);
  const withFile = daemons.filter((p) => p.cmdline.includes(`--properties-file ${props}`));
  assert.ok(withFile.length >= 2, JSON.stringify(daemons));
  lc.child.kill('SIGTERM');
  await lc.exited;
  assert.deepEqual(await waitUntilGone(daemons.map((d) => d.pid)), []);
});
