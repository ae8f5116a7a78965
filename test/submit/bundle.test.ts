/**
 * Bundling a submitted application, with the cache of bundles between submits: a second submit of
 * an unchanged app reuses the bundle; an edit, or a new file beside an input, makes it bundle again.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import {
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rm,
  symlink,
  utimes,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import { bundleApp } from '../../backend/submit/bundle.js';
import { BundleCache } from '../../backend/submit/bundleCache.js';
import { assertBuilt } from '../helpers/cli.js';

let root: string;
const saved = process.env.WICK_BUNDLE_CACHE;

before(async () => {
  assertBuilt();
  root = await mkdtemp(join(tmpdir(), 'wick-bundle-test-'));
});
after(async () => {
  if (saved === undefined) delete process.env.WICK_BUNDLE_CACHE;
  else process.env.WICK_BUNDLE_CACHE = saved;
  await rm(root, { recursive: true, force: true });
});

/** Writes a file and dates it (and its folder) a minute back: settled, as files being submitted are. */
async function writeOld(path: string, text: string): Promise<void> {
  await writeFile(path, text);
  const past = new Date(Date.now() - 60_000);
  await utimes(path, past, past);
  await utimes(dirname(path), past, past);
}

/** The compiled modules of an app's tree, entry first. */
async function bundled(app: string): Promise<string> {
  const b = await bundleApp(app);
  try {
    const modules = b.code.files.map((f) => f.path).filter((p) => p.endsWith('.mjs'));
    const texts = await Promise.all(modules.map((p) => readFile(join(b.root, p), 'utf8')));
    return [await readFile(b.bundle, 'utf8'), ...texts].join('\n');
  } finally {
    await rm(b.root, { recursive: true, force: true });
  }
}

async function entries(cacheDir: string): Promise<string[]> {
  return (await readdir(cacheDir).catch(() => [])).filter((f) => f.endsWith('.json')).sort();
}

test('an unchanged app is bundled once; an edit of an imported file bundles again', async () => {
  const dir = await mkdtemp(join(root, 'app-'));
  const cacheDir = join(root, 'cache-edit');
  process.env.WICK_BUNDLE_CACHE = cacheDir;
  await writeOld(join(dir, 'helper.ts'), "export const word: string = 'first';\n");
  await writeOld(join(dir, 'app.ts'), "import { word } from './helper.js';\nconsole.log(word);\n");
  const app = join(dir, 'app.ts');

  const one = await bundled(app);
  assert.match(one, /"first"/);
  const kept = await entries(cacheDir);
  assert.equal(kept.length, 1, 'the first bundle is kept');
  // A hit copies the kept tree, not a new build: a mark added to a kept module shows up.
  const keptHelper = join(cacheDir, (kept[0] as string).replace(/\.json$/, ''), 'helper.mjs');
  await writeFile(keptHelper, `${await readFile(keptHelper, 'utf8')}// from the cache\n`);
  assert.match(await bundled(app), /\/\/ from the cache/);
  assert.deepEqual(await entries(cacheDir), kept);

  // The imported file changes (its size too, but the stamp's time alone would do).
  await writeOld(join(dir, 'helper.ts'), "export const word: string = 'second, edited';\n");
  const two = await bundled(app);
  assert.match(two, /"second, edited"/);
  assert.doesNotMatch(two, /"first"/);
});

test('a file added beside an input makes the bundle stale (resolution may change)', async () => {
  const dir = await mkdtemp(join(root, 'app-'));
  process.env.WICK_BUNDLE_CACHE = join(root, 'cache-add');
  await writeOld(join(dir, 'dep.js'), "export const from = 'js';\n");
  await writeOld(join(dir, 'app.ts'), "import { from } from './dep';\nconsole.log(from);\n");
  const app = join(dir, 'app.ts');
  assert.match(await bundled(app), /"js"/);
  // esbuild prefers dep.ts over dep.js for './dep': a new file changes what the app imports.
  await writeFile(join(dir, 'dep.ts'), "export const from: string = 'ts';\n");
  const after = await bundled(app);
  assert.match(after, /"ts"/);
});

test('files changed just before the build are not trusted: nothing is kept', async () => {
  const dir = await mkdtemp(join(root, 'app-'));
  const cacheDir = join(root, 'cache-fresh');
  process.env.WICK_BUNDLE_CACHE = cacheDir;
  await writeFile(join(dir, 'app.js'), 'console.log(1);\n');
  await bundled(join(dir, 'app.js'));
  assert.deepEqual(await entries(cacheDir), []);
});

test('WICK_BUNDLE_CACHE=off bundles every time and keeps nothing', async () => {
  process.env.WICK_BUNDLE_CACHE = 'off';
  assert.equal(BundleCache.fromEnv(), undefined);
  const dir = await mkdtemp(join(root, 'app-'));
  await writeOld(join(dir, 'app.js'), 'console.log(2);\n');
  assert.match(await bundled(join(dir, 'app.js')), /console\.log\(2\)/);
});

test('the default cache folder follows XDG_CACHE_HOME, else ~/.cache', () => {
  assert.equal(
    BundleCache.fromEnv({ XDG_CACHE_HOME: '/x/cache' })?.dir,
    join('/x/cache', 'wick', 'bundles'),
  );
  assert.match(BundleCache.fromEnv({})?.dir ?? '', /\.cache\/wick\/bundles$/);
});

test('a corrupt cache entry is a miss, never an error', async () => {
  const dir = await mkdtemp(join(root, 'app-'));
  const cacheDir = join(root, 'cache-corrupt');
  process.env.WICK_BUNDLE_CACHE = cacheDir;
  await writeOld(join(dir, 'app.js'), 'console.log(3);\n');
  await bundled(join(dir, 'app.js'));
  const [entry] = await entries(cacheDir);
  assert.ok(entry);
  await writeFile(join(cacheDir, entry), '{ not json');
  assert.match(await bundled(join(dir, 'app.js')), /console\.log\(3\)/);
});

/** Runs `fn` with the temp folder (os.tmpdir()) moved to a folder of its own. */
async function inOwnTemp<T>(fn: (temp: string) => Promise<T>): Promise<T> {
  const temp = await mkdtemp(join(root, 'temp-'));
  const saved = process.env.TMPDIR;
  process.env.TMPDIR = temp;
  try {
    return await fn(temp);
  } finally {
    if (saved === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = saved;
  }
}

test('an app that does not bundle leaves no folder behind', async () => {
  const dir = await mkdtemp(join(root, 'broken-'));
  process.env.WICK_BUNDLE_CACHE = join(root, 'cache-broken');
  await writeOld(join(dir, 'app.ts'), 'const x = ;\n');
  await inOwnTemp(async (temp) => {
    await assert.rejects(bundleApp(join(dir, 'app.ts')), /Syntax error in .*app\.ts:1:11/);
    assert.deepEqual(await readdir(temp), []);
  });
});

test('a submit bundles in a folder named for its pid, and removes those of submits that are gone', async () => {
  // A pid that was just in use and is free now.
  const child = spawn(process.execPath, ['-e', '0']);
  const gone = child.pid as number;
  await once(child, 'exit');
  const dir = await mkdtemp(join(root, 'sweep-'));
  process.env.WICK_BUNDLE_CACHE = join(root, 'cache-sweep');
  await writeOld(join(dir, 'app.ts'), 'console.log(1);\n');
  await inOwnTemp(async (temp) => {
    const others = [`wick-submit-${process.pid}-bbbbbb`, `other-${gone}-dddddd`];
    for (const n of [`wick-submit-${gone}-aaaaaa`, ...others]) await mkdir(join(temp, n));
    const b = await bundleApp(join(dir, 'app.ts'));
    const own = basename(b.root);
    assert.match(own, new RegExp(`^wick-submit-${process.pid}-`));
    // The sweep runs beside the bundling, not waited for.
    const deadline = Date.now() + 10_000;
    while ((await readdir(temp)).includes(`wick-submit-${gone}-aaaaaa`) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual((await readdir(temp)).sort(), [...others, own].sort());
  });
});

test('a package with a link back up its own folders is listed once, not walked for ever', async () => {
  const dir = await mkdtemp(join(root, 'cycle-'));
  process.env.WICK_BUNDLE_CACHE = 'off';
  await mkdir(join(dir, 'node_modules', 'loopy', 'sub'), { recursive: true });
  await writeOld(
    join(dir, 'node_modules', 'loopy', 'package.json'),
    '{ "name": "loopy", "main": "index.js" }\n',
  );
  await writeOld(join(dir, 'node_modules', 'loopy', 'index.js'), 'module.exports = 5;\n');
  await symlink('..', join(dir, 'node_modules', 'loopy', 'sub', 'back'));
  await writeOld(join(dir, 'app.ts'), "import loopy from 'loopy';\nconsole.log(loopy);\n");
  const b = await bundleApp(join(dir, 'app.ts'));
  try {
    const paths = b.code.files.map((f) => f.path).filter((p) => p.startsWith('node_modules/'));
    assert.deepEqual(paths.sort(), [
      'node_modules/loopy/index.js',
      'node_modules/loopy/package.json',
    ]);
  } finally {
    await rm(b.root, { recursive: true, force: true });
  }
});
