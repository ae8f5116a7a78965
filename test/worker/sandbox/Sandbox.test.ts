/**
 * The view sandboxView takes of this machine, through real bwrap: a confined process names the
 * worker's time zone by the same /etc/localtime link (ICU, given a plain file there, compared it
 * with every zone file, 20 ms at each confined process's first log line).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { lstatSync, readlinkSync } from 'node:fs';
import { test } from 'node:test';
import { bwrapSandbox } from '../../helpers/sandbox.js';

test("a confined process sees /etc/localtime as the worker does, and the worker's time zone", (t) => {
  const { sandbox, workDir } = bwrapSandbox(t, 'sandbox-view');
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
