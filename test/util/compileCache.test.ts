/**
 * The compile cache that dist/wick.cjs runs the CLI bundle with (backend/util/compileCache.ts): real
 * Node processes, since a cache is written when its process exits.
 */
import assert from 'node:assert/strict';
import { isAscii } from 'node:buffer';
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ALL_COMMAND_NAMES, OWN_BUNDLES } from '../../backend/cli/commandNames.js';
import { compileCacheDir, compileCacheKey } from '../../backend/util/compileCache.js';

const loader = fileURLToPath(new URL('../../backend/util/compileCache.ts', import.meta.url));
const root = mkdtempSync(join(tmpdir(), 'wick-compile-cache-test-'));
after(() => rmSync(root, { recursive: true, force: true }));

/** A CommonJS bundle that exports a value and, like Wick's, imports through the loader's import(). */
function writeBundle(dir: string, answer = 42): string {
  const file = join(mkdtempSync(join(root, `${dir}-`)), 'main.cjs');
  writeFileSync(
    file,
    `function sum(xs) { return xs.reduce((a, b) => a + b, 0); }
module.exports = { answer: ${answer}, sum: sum([1, 2, 3]), filename: __filename };
__wickImport('node:os').then((os) => console.log('imported ' + typeof os.cpus));\n`,
  );
  return file;
}

/** Runs `bundle` through runBundle in a fresh Node; what it reported, and what it printed. */
function run(bundle: string, dir: string | undefined, key = 'cmd', build = 'b1') {
  const script = `import { runBundle } from ${JSON.stringify(loader)};
const r = runBundle(${JSON.stringify(bundle)}, { dir: ${JSON.stringify(dir)}, key: ${JSON.stringify(key)}, build: ${JSON.stringify(build)} }, (s) => import(s));
console.log(JSON.stringify(r));`;
  const p = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    encoding: 'utf8',
  });
  assert.equal(p.status, 0, `the bundle's process failed: ${p.stderr}`);
  const [report, ...rest] = p.stdout.trim().split('\n');
  return {
    ...(JSON.parse(report as string) as { cache: string; exports: Record<string, unknown> }),
    printed: rest,
  };
}

const cacheFiles = (dir: string) =>
  readdirSync(dir)
    .filter((f) => f.endsWith('.v8cache'))
    .sort();

test("a command's first run writes its cache, and the next runs compile from it", () => {
  const dir = join(root, 'first');
  const bundle = writeBundle('first');
  const first = run(bundle, dir);
  assert.equal(first.cache, 'miss');
  assert.deepEqual(first.exports, { answer: 42, sum: 6, filename: bundle });
  assert.deepEqual(first.printed, ['imported function']);
  const files = cacheFiles(dir);
  assert.equal(files.length, 1);
  assert.match(files[0] as string, /^cmd-\d+-[0-9a-z]+-b1-\d+-\d+\.v8cache$/);
  for (let i = 0; i < 2; i++) {
    const next = run(bundle, dir);
    assert.equal(next.cache, 'hit');
    assert.deepEqual(next.exports, first.exports);
    // import() from code compiled out of a cache: what the loader's own import() is for.
    assert.deepEqual(next.printed, ['imported function']);
  }
  assert.deepEqual(cacheFiles(dir), files);
});

test('a cache that V8 refuses is replaced, and the command runs all the same', () => {
  const dir = join(root, 'refused');
  const bundle = writeBundle('refused');
  run(bundle, dir);
  const [name] = cacheFiles(dir);
  writeFileSync(join(dir, name as string), 'not a V8 code cache');
  const refused = run(bundle, dir);
  assert.equal(refused.cache, 'miss');
  assert.equal(refused.exports.answer, 42);
  assert.notEqual(readFileSync(join(dir, name as string), 'utf8'), 'not a V8 code cache');
  assert.equal(run(bundle, dir).cache, 'hit');
});

test("each command keeps its own cache, and a rebuilt bundle replaces only its install's", () => {
  const dir = join(root, 'keys');
  const bundle = writeBundle('keys');
  const otherInstall = writeBundle('keys-other');
  run(bundle, dir, 'submit');
  run(bundle, dir, 'status');
  run(otherInstall, dir, 'submit');
  const before = cacheFiles(dir);
  assert.equal(before.length, 3);
  // Rebuilt: another size (and mtime).
  writeFileSync(bundle, readFileSync(bundle, 'utf8').replace('answer: 42', 'answer: 4242'));
  const rebuilt = run(bundle, dir, 'submit');
  assert.equal(rebuilt.cache, 'miss');
  assert.equal(rebuilt.exports.answer, 4242);
  const after = cacheFiles(dir);
  assert.equal(after.length, 3, `one submit cache replaced, got ${after.join(', ')}`);
  assert.equal(after.filter((f) => !before.includes(f)).length, 1);
  assert.equal(run(bundle, dir, 'submit').cache, 'hit');
  assert.equal(run(otherInstall, dir, 'submit').cache, 'hit');
});

test("another build with the same size and mtime (a package's files may share one) gets its own cache", () => {
  const dir = join(root, 'build');
  const bundle = writeBundle('build', 11);
  const { mtime } = statSync(bundle);
  assert.equal(run(bundle, dir, 'cmd', 'b1').exports.answer, 11);
  // Same length, other code, the old mtime: only the build id tells them apart.
  writeFileSync(bundle, readFileSync(bundle, 'utf8').replace('answer: 11', 'answer: 22'));
  utimesSync(bundle, mtime, mtime);
  const next = run(bundle, dir, 'cmd', 'b2');
  assert.equal(next.cache, 'miss');
  assert.equal(next.exports.answer, 22);
});

test('the folder keeps at most 64 caches: writing one drops the oldest beyond', () => {
  const dir = join(root, 'cap');
  mkdirSync(dir);
  for (let i = 0; i < 70; i++) {
    const f = join(dir, `other-1-x${i}-1-1.v8cache`);
    writeFileSync(f, '');
    utimesSync(f, 1000 + i, 1000 + i);
  }
  run(writeBundle('cap'), dir);
  const files = cacheFiles(dir);
  assert.equal(files.length, 64);
  assert.ok(
    files.some((f) => f.startsWith('cmd-')),
    'the new cache is kept',
  );
  assert.ok(files.includes('other-1-x69-1-1.v8cache') && !files.includes('other-1-x6-1-1.v8cache'));
});

test('V8 flags changed while running: no cache is written, since the next run would refuse it', () => {
  const dir = join(root, 'flags');
  const file = join(mkdtempSync(join(root, 'flags-')), 'main.cjs');
  // A flag that is part of what a code cache must match (executors once set this one for their
  // task threads; see backend/app/executor/taskThreadFlags.ts).
  writeFileSync(file, "require('node:v8').setFlagsFromString('--min-semi-space-size=16');\n");
  assert.equal(run(file, dir).cache, 'miss');
  assert.ok(!existsSync(dir) || cacheFiles(dir).length === 0, 'no cache written');
});

test("an executor, which changes V8's flags for its task threads, still leaves a cache (dist/wick.cjs)", () => {
  const dir = join(root, 'executor');
  const wick = fileURLToPath(new URL('../../dist/wick.cjs', import.meta.url));
  // A standby whose worker is gone at once (stdin closed): it starts its task thread, then exits.
  const p = spawnSync(process.execPath, [wick, 'executor-standby', '--threads', '1'], {
    input: '',
    env: { ...process.env, WICK_COMPILE_CACHE: dir },
    encoding: 'utf8',
    timeout: 30_000,
  });
  assert.equal(p.status, 0, p.stderr);
  assert.equal(cacheFiles(dir).filter((f) => f.startsWith('executor-standby-')).length, 1);
});

test('a bundle that is not all ASCII is read as UTF-8', () => {
  const file = join(mkdtempSync(join(root, 'utf8-')), 'main.cjs');
  writeFileSync(file, "module.exports = { text: 'déjà vu – ≥ 2 🚀' };\n");
  assert.equal(run(file, join(root, 'utf8')).exports.text, 'déjà vu – ≥ 2 🚀');
});

test('without a folder there is no cache', () => {
  const bundle = writeBundle('off');
  const r = run(bundle, undefined);
  assert.equal(r.cache, 'off');
  assert.equal(r.exports.answer, 42);
});

test('the cache folder: WICK_COMPILE_CACHE (or off), else under XDG_CACHE_HOME or ~/.cache', () => {
  assert.equal(compileCacheDir({ WICK_COMPILE_CACHE: 'off' }), undefined);
  assert.equal(compileCacheDir({ WICK_COMPILE_CACHE: '/x/y' }), '/x/y');
  assert.equal(compileCacheDir({ XDG_CACHE_HOME: '/c' }), join('/c', 'wick', 'compile'));
  assert.match(compileCacheDir({}) as string, /\.cache\/wick\/compile$/);
});

test("the cache key is the command, when it is one of Wick's; anything else shares one", () => {
  const key = (...args: string[]) => compileCacheKey(['node', 'wick', ...args], ALL_COMMAND_NAMES);
  assert.equal(key('submit', 'app.ts'), 'submit');
  assert.equal(key('executor-standby'), 'executor-standby');
  assert.equal(key('--version'), 'other');
  assert.equal(key(), 'other');
  assert.equal(key('submitt'), 'other');
  assert.equal(key('../../etc'), 'other');
});

/** dist/cli/main.cjs and the commands' own bundles (commandNames.ts, OWN_BUNDLES). */
const cliBundles = ['main.cjs', ...Object.values(OWN_BUNDLES)].map((name) => ({
  name,
  file: fileURLToPath(new URL(`../../dist/cli/${name}`, import.meta.url)),
}));

test('the CLI bundles are all ASCII, which the loader reads the fast way (scripts/build.mjs)', () => {
  for (const { name, file } of cliBundles)
    assert.ok(isAscii(readFileSync(file)), `dist/cli/${name} has non-ASCII bytes`);
});

test('the CLI bundles call import() only through importModule (backend/util/importModule.ts)', () => {
  for (const { name, file } of cliBundles) {
    const bundle = readFileSync(file, 'utf8');
    const calls = [...bundle.matchAll(/(?<![\w$.])import\(/g)].map((m) =>
      bundle.slice(m.index - 60, m.index + 30).replace(/\s+/g, ' '),
    );
    // Comments and acorn's error message mention import( too, and @peculiar/x509 has a method
    // named import (a definition, `import(data, options) {`, not a call).
    const code = calls.filter(
      (c) => !/\*|\/\/|not allowed in import\(\)|\} import\([\w$]+, [\w$]+\) \{/.test(c),
    );
    // Only importModule's own, in each bundle that has it (the executor's loads no module).
    assert.ok(code.length <= 1, `import() calls in ${name}:\n${code.join('\n')}`);
    if (name === 'main.cjs') assert.equal(code.length, 1, 'main.cjs has importModule');
    // (The bundler may rename the parameter: specifier2.)
    for (const c of code) assert.match(c, /__wickImport\((specifier\d*)\) : import\(\1\)/, name);
  }
});
