/** The bubblewrap command line (pure): what a confined process sees, in mount order. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bwrapArgs, isWithin } from '../../../backend/worker/sandbox/bwrapArgs.js';

const view = {
  systemDirs: [{ path: '/bin', symlinkTo: 'usr/bin' }, { path: '/lib64' }],
  readOnly: ['/opt/wick'],
  hidden: ['/opt/wick/work', '/var/wick/local', '/root/.config/wick'],
  hiddenFiles: ['/opt/wick/secret', '/etc/wick/secret'],
  home: '/root',
};

/** The index of `flag a b` in `args`, or -1. */
function at(args: string[], ...seq: string[]): number {
  for (let i = 0; i + seq.length <= args.length; i++)
    if (seq.every((s, j) => args[i + j] === s)) return i;
  return -1;
}

test('system read-only, own namespaces, no capabilities, own dirs read-write last', () => {
  const a = bwrapArgs(view, { cwd: '/opt/wick/work/app-1/0', readWrite: ['/var/wick/local/x'] }, [
    'node',
    'x.js',
  ]);
  assert.ok(at(a, '--ro-bind', '/usr', '/usr') >= 0);
  assert.ok(at(a, '--symlink', 'usr/bin', '/bin') >= 0);
  assert.ok(at(a, '--ro-bind', '/lib64', '/lib64') >= 0);
  assert.ok(at(a, '--ro-bind-try', '/etc/passwd', '/etc/passwd') >= 0);
  assert.equal(at(a, '--ro-bind-try', '/etc/shadow', '/etc/shadow'), -1, 'no /etc/shadow');
  for (const f of ['--unshare-pid', '--die-with-parent']) assert.ok(a.includes(f), f);
  assert.ok(at(a, '--cap-drop', 'ALL') >= 0);
  assert.ok(at(a, '--proc', '/proc') >= 0 && at(a, '--tmpfs', '/tmp') >= 0);
  // The work dir inside the install is covered after the install is shown; other hidden places,
  // not shown by any tree, need nothing.
  const install = at(a, '--ro-bind', '/opt/wick', '/opt/wick');
  const cover = at(a, '--tmpfs', '/opt/wick/work');
  assert.ok(install >= 0 && cover > install, a.join(' '));
  assert.equal(at(a, '--tmpfs', '/var/wick/local'), -1);
  assert.ok(at(a, '--ro-bind', '/dev/null', '/opt/wick/secret') > install);
  assert.equal(at(a, '--ro-bind', '/dev/null', '/etc/wick/secret'), -1);
  // Its own dirs come after every cover, so they show through it.
  const own = at(a, '--bind', '/opt/wick/work/app-1/0', '/opt/wick/work/app-1/0');
  assert.ok(own > cover && at(a, '--bind', '/var/wick/local/x', '/var/wick/local/x') > own);
  // An empty home of its own, before the trees (one may lie inside it).
  const home = at(a, '--tmpfs', '/root');
  assert.ok(home >= 0 && home < install);
  assert.deepEqual(a.slice(-3), ['--', 'node', 'x.js']);
});

test('a home inside a shown tree is covered after it', () => {
  const a = bwrapArgs({ ...view, home: '/opt/wick/home' }, { cwd: '/w/0', readWrite: [] }, ['x']);
  assert.ok(at(a, '--tmpfs', '/opt/wick/home') > at(a, '--ro-bind', '/opt/wick', '/opt/wick'));
});

test("the worker's code cache: read-only, out of the work dir, named in the environment", () => {
  const cache = '/opt/wick/work/.compile-cache';
  const inside = '/run/wick/compile-cache';
  const a = bwrapArgs(
    { ...view, compileCache: cache },
    { cwd: '/opt/wick/work/app-1/0', readWrite: [] },
    ['node'],
  );
  assert.ok(at(a, '--ro-bind-try', cache, inside) >= 0, a.join(' '));
  assert.equal(at(a, '--bind', cache, inside), -1, 'not writable');
  // Not at its own path, where it would show in the work dir beside the process's own dir.
  assert.ok(!a.some((x, i) => x === cache && a[i + 1] === cache));
  assert.ok(at(a, '--setenv', 'WICK_COMPILE_CACHE', inside) >= 0);
  // Writable only for the worker's run that fills it.
  const filling = bwrapArgs(
    { ...view, compileCache: cache },
    { cwd: cache, readWrite: [] },
    ['x'],
    { compileCacheWritable: true },
  );
  assert.ok(at(filling, '--bind', cache, inside) >= 0);
  // Without one, nothing of it.
  const none = bwrapArgs(view, { cwd: '/w/0', readWrite: [] }, ['x']);
  assert.ok(!none.includes('--setenv') && !none.some((x) => x.includes('compile-cache')));
});

test('isWithin: the tree itself and what is under it, not a sibling with the same prefix', () => {
  assert.ok(isWithin('/opt/wick', '/opt/wick'));
  assert.ok(isWithin('/opt/wick/a', '/opt/wick'));
  assert.ok(!isWithin('/opt/wicked', '/opt/wick'));
  assert.ok(isWithin('/anything', '/'));
});

test("/etc/localtime: the host's link made again when it has one into /usr, else the file bound", () => {
  const linked = bwrapArgs(
    { ...view, localtimeLink: '/usr/share/zoneinfo/Europe/Paris' },
    { cwd: '/w/0', readWrite: [] },
    ['x'],
  );
  assert.ok(at(linked, '--symlink', '/usr/share/zoneinfo/Europe/Paris', '/etc/localtime') >= 0);
  assert.equal(at(linked, '--ro-bind-try', '/etc/localtime', '/etc/localtime'), -1);
  const plain = bwrapArgs(view, { cwd: '/w/0', readWrite: [] }, ['x']);
  assert.ok(at(plain, '--ro-bind-try', '/etc/localtime', '/etc/localtime') >= 0);
  assert.equal(plain.indexOf('/etc/localtime'), plain.lastIndexOf('/etc/localtime') - 1);
});
