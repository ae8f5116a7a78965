/**
 * The view sandboxView takes of this machine, through real bwrap: a confined process names the
 * worker's time zone by the same /etc/localtime link (ICU, given a plain file there, compared it
 * with every zone file, 20 ms at each confined process's first log line).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { lstatSync, mkdtempSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { chooseSandbox } from '../../../backend/worker/sandbox/Sandbox.js';

test("a confined process sees /etc/localtime as the worker does, and the worker's time zone", (t) => {
  const workDir = mkdtempSync(join(tmpdir(), 'wick-sandbox-view-'));
  t.after(() => rmSync(workDir, { recursive: true, force: true }));
  const { sandbox } = chooseSandbox('bwrap', {
    workDir,
    localDirRoots: [],
    secretDirs: [],
    secretFiles: [],
    extraReadOnly: [],
  });
  assert.ok(sandbox);
  const probe = `const fs = require('node:fs');
    console.log(JSON.stringify({
      link: fs.lstatSync('/etc/localtime').isSymbolicLink() ? fs.readlinkSync('/etc/localtime') : null,
      zone: Intl.DateTimeFormat().resolvedOptions().timeZone,
      hours: new Date(0).getHours(),
    }));`;
  const argv = sandbox.wrap([process.execPath, '-e', probe], { cwd: workDir, readWrite: [] });
  const r = spawnSync(argv[0] as string, argv.slice(1), { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
  const seen = JSON.parse(r.stdout) as { link: string | null; zone: string; hours: number };
  assert.deepEqual(seen, {
    link: lstatSync('/etc/localtime').isSymbolicLink() ? readlinkSync('/etc/localtime') : null,
    zone: Intl.DateTimeFormat().resolvedOptions().timeZone,
    hours: new Date(0).getHours(),
  });
});
