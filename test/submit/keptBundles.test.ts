/**
 * Cluster-mode bundles kept for the workers: one file per distinct bundle, the submit's own
 * folder removed, unused ones removed after KEEP_MS, and the bundle left in place when the folder
 * cannot be written.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import { KEEP_MS, keepForCluster, keptBundlesDir } from '../../backend/submit/keptBundles.js';

let root: string;
before(async () => {
  root = await mkdtemp(join(tmpdir(), 'wick-kept-test-'));
});
after(() => rm(root, { recursive: true, force: true }));

/** A bundle as bundleApp leaves it: alone in a folder of its own. */
async function fresh(name: string, text: string) {
  const dir = await mkdtemp(join(root, 'submit-'));
  const bundle = join(dir, `${name}.mjs`);
  await writeFile(bundle, text);
  return { source: `/apps/${name}.ts`, bundle };
}

test('the same bundle submitted twice is one kept file; the submits’ folders are removed', async () => {
  const kept = join(root, 'kept-same');
  const a = await fresh('pi', 'console.log(1)');
  const b = await fresh('pi', 'console.log(1)');
  const ka = await keepForCluster(a, kept);
  const kb = await keepForCluster(b, kept);
  assert.equal(ka.bundle, kb.bundle);
  assert.equal(basename(ka.bundle), 'pi.mjs', 'the app keeps its name');
  assert.equal(ka.source, a.source);
  assert.equal(await readFile(ka.bundle, 'utf8'), 'console.log(1)');
  assert.equal(existsSync(dirname(a.bundle)), false);
  assert.equal(existsSync(dirname(b.bundle)), false);
  assert.equal((await readdir(kept)).length, 1);
});

test('a changed bundle is kept apart, and the earlier one stays (a driver may still need it)', async () => {
  const kept = join(root, 'kept-changed');
  const one = await keepForCluster(await fresh('pi', 'v1'), kept);
  const two = await keepForCluster(await fresh('pi', 'v2'), kept);
  assert.notEqual(one.bundle, two.bundle);
  assert.equal(await readFile(one.bundle, 'utf8'), 'v1');
  assert.equal(await readFile(two.bundle, 'utf8'), 'v2');
});

test('bundles unused for KEEP_MS go at the next cluster submit; a submit marks its bundle used', async () => {
  const kept = join(root, 'kept-old');
  const now = Date.now();
  const old = await keepForCluster(await fresh('old', 'old'), kept, now - KEEP_MS - 60_000);
  const reused = await keepForCluster(
    await fresh('reused', 'reused'),
    kept,
    now - KEEP_MS - 60_000,
  );
  // Submitted again a day ago: used.
  await keepForCluster(await fresh('reused', 'reused'), kept, now - 24 * 3600_000);
  const past = new Date(now - KEEP_MS - 60_000);
  await utimes(dirname(old.bundle), past, past);
  const latest = await keepForCluster(await fresh('new', 'new'), kept, now);
  assert.equal(existsSync(old.bundle), false, 'unused for longer than KEEP_MS: removed');
  assert.equal(existsSync(reused.bundle), true);
  assert.equal(existsSync(latest.bundle), true);
});

test('a folder that cannot be written leaves the bundle where it was made', async (t) => {
  if (process.getuid?.() === 0) {
    // root writes anywhere: a path under a file stands in for an unwritable folder.
    const blocker = join(root, 'a-file');
    await writeFile(blocker, '');
    const app = await fresh('pi', 'x');
    assert.deepEqual(await keepForCluster(app, join(blocker, 'kept')), app);
    assert.equal(await readFile(app.bundle, 'utf8'), 'x');
    return;
  }
  const locked = join(root, 'locked');
  await mkdir(locked);
  await chmod(locked, 0o500);
  t.after(() => chmod(locked, 0o700));
  const app = await fresh('pi', 'x');
  assert.deepEqual(await keepForCluster(app, join(locked, 'kept')), app);
  assert.equal(await readFile(app.bundle, 'utf8'), 'x');
});

test('the folder follows WICK_SUBMITTED_DIR, else XDG_CACHE_HOME, else ~/.cache', () => {
  assert.equal(keptBundlesDir({ WICK_SUBMITTED_DIR: '/x/kept' }), '/x/kept');
  assert.equal(keptBundlesDir({ XDG_CACHE_HOME: '/c' }), '/c/wick/submitted');
  assert.match(keptBundlesDir({}), /\/\.cache\/wick\/submitted$/);
});
